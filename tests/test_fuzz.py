"""A property-based fuzz (hypothesis) of every reader of JSON from outside: the task file, a
per-model file, the leaderboard's index, the carbon table, a published copy and a snapshot's
snapshot.json. Whatever the bytes, each reader returns, or raises one of the package's own
errors (the EnergyIndexError family; a per-model file's ModelFileProblem, which the build turns
into a skipped pick); never a traceback of anything else.

The inputs are the real files mutated (a value anywhere replaced by any JSON value, a key
dropped or repeated, the bytes cut, flipped or spliced) and JSON from scratch. ``make test``
runs 100 inputs for each; ``make fuzz`` runs many
(``ENERGY_INDEX_FUZZ_EXAMPLES``) and prints how many inputs each reader was given.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energy_index.errors import EnergyIndexError
from energy_index.model import INDEX_PATH, SNAPSHOT_MANIFEST
from energy_index.settings import CARBON_PATH
from tests.conftest import GOLDEN, PUBLISHED, TASK_PATH, upstream_file
from tests.test_impacts import CARBON_FIXTURE

EXAMPLES = int(os.environ.get("ENERGY_INDEX_FUZZ_EXAMPLES", "100"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,  # the same inputs on every machine: derandomized, nothing remembered
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
TRIED: Counter[str] = Counter()  # inputs given to each reader, for make fuzz's summary
REFUSED: Counter[str] = Counter()  # of which the reader refused (one of the tool's errors)
MODEL_PATH = "public/data/models/Qwen__Qwen3-14B__gpqa.json"


# -- inputs ----------------------------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0, -1, -0.0, 1e308, 5e-324, 2**63, 10**7, "", "NaN", "\u2028", "\x1b]"])
    | st.text(max_size=40)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    """Every path into a JSON value (keys and indexes), the value itself first."""
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):  # the first few items of a long list
            found += _paths(item, (*at, index))
    return found


def _replaced(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copied = copy.copy(value)
    copied[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copied


def _dropped(value: Any, path: tuple) -> Any:
    if not path:
        return value
    if len(path) == 1:
        copied = copy.copy(value)
        del copied[path[0]]
        return copied
    return _replaced(value, path[:1], _dropped(value[path[0]], path[1:]))


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def _like(value: Any) -> st.SearchStrategy[Any]:
    """Values of the JSON type of ``value``."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(min_value=-(10**20), max_value=10**20) | st.sampled_from([0, -1, 1])
    if isinstance(value, float):
        return st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0])
    if isinstance(value, str):
        return st.text(max_size=30) | st.sampled_from(["", value.upper(), value + "\u202e"])
    if isinstance(value, list):
        return st.lists(st.sampled_from(value), max_size=6) if value else st.just([])
    return VALUES


def _dumped(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw: st.DrawFn, original: Any) -> bytes:
    """The original document with one to three changes (a value replaced by one of its own JSON
    type, or by any JSON value; a key or an item dropped), then, now and then, a key written
    twice or the bytes damaged (cut, flipped, spliced); or JSON from scratch."""
    if draw(st.integers(0, 9)) == 0:
        return _dumped(draw(VALUES))
    document = original
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(document)[1:] or [()]))  # the whole: from scratch
        kind = draw(st.sampled_from(["same kind", "same kind", "any", "any", "drop"]))
        if kind == "drop" and path:
            document = _dropped(document, path)
        elif kind == "same kind":  # past the schema, into the rules
            document = _replaced(document, path, draw(_like(_at(document, path))))
        else:
            document = _replaced(document, path, draw(VALUES))
    content = _dumped(document)
    damage = draw(st.sampled_from(["none", "none", "none", "repeat", "bytes"]))
    if damage == "repeat":
        return _repeated_key(draw, content)
    if damage == "bytes":
        return _damaged(draw, content)
    return content


def _repeated_key(draw: st.DrawFn, content: bytes) -> bytes:
    """A key of the document written a second time, before the first, with another value."""
    text = content.decode("utf-8", "surrogatepass")
    starts = [i for i, c in enumerate(text) if c == '"' and text[i - 1 : i] in ("{", " ")]
    keys = [i for i in starts if text.find('": ', i + 1) > 0][:50]
    if not keys:
        return content
    at = draw(st.sampled_from(keys))
    key = text[at : text.find('": ', at + 1) + 3]
    extra = f"{key}{json.dumps(draw(VALUES), allow_nan=True)}, "
    return (text[:at] + extra + text[at:]).encode("utf-8", "surrogatepass")


def _damaged(draw: st.DrawFn, content: bytes) -> bytes:
    damaged = bytearray(content)
    for _ in range(draw(st.integers(1, 4))):
        if not damaged:
            break
        at = draw(st.integers(0, len(damaged) - 1))
        how = draw(st.sampled_from(["cut", "flip", "insert"]))
        if how == "cut":
            del damaged[at:]
        elif how == "flip":
            damaged[at] = draw(st.integers(0, 255))
        else:
            damaged[at:at] = draw(st.binary(min_size=1, max_size=8))
    return bytes(damaged)


def _reads(name: str, read: Callable[[bytes], object], content: bytes, *own: type) -> None:
    TRIED[name] += 1
    try:
        read(content)
    except (EnergyIndexError, *own):
        REFUSED[name] += 1


@cache
def _document(path: Path, *, shrink: str | None = None) -> Any:
    """A real file, its long list ``shrink`` cut to three items (mutations land anywhere)."""
    document = json.loads(path.read_bytes())
    if shrink:
        document[shrink] = document[shrink][:3]
    return document


# -- the readers -----------------------------------------------------------------------------


@FUZZ
@given(st.data())
def test_the_task_file_reader(data):
    from energy_index.steps.validate import validated_configurations

    content = data.draw(mutated(_document(GOLDEN / TASK_PATH, shrink="configurations")))
    _reads("task file", lambda c: validated_configurations(upstream_file(c)), content)


@FUZZ
@given(st.data())
def test_the_per_model_file_reader_and_the_responses_it_feeds(data):
    from energy_index.steps.responses import (
        ModelFile,
        ModelFileProblem,
        parsed_model_file,
        response_energy,
    )

    original = _document(GOLDEN / MODEL_PATH, shrink="configurations")
    content = data.draw(mutated(original))

    def read(content: bytes) -> None:
        parsed = parsed_model_file(content)
        assert isinstance(parsed, ModelFile)
        for c in parsed.configurations[:3]:  # each as the pick it matches: figures computed
            pick = {
                "model_id": parsed.model_id, "nickname": "n", "gpu_model": c.gpu_model,
                "num_gpus": c.num_gpus, "max_num_seqs": c.max_num_seqs,
                "energy_per_token_joules": c.energy_per_token_joules,
                "energy_per_request_joules": c.energy_per_token_joules * c.avg_output_len,
                "avg_output_len": c.avg_output_len,
            }  # fmt: skip
            json.dumps(response_energy([pick], {parsed.model_id: parsed}), allow_nan=False)

    _reads("per-model file", read, content, ModelFileProblem)


@FUZZ
@given(st.data())
def test_the_leaderboard_index_reader(data):
    from energy_index.steps.validate import leaderboard_compiled, refuse_unsupported_task

    content = data.draw(mutated(_document(GOLDEN / INDEX_PATH)))

    def read(content: bytes) -> None:
        leaderboard_compiled(upstream_file(content, path=INDEX_PATH))
        refuse_unsupported_task(upstream_file(content, path=INDEX_PATH), "lm-arena-chat")

    _reads("leaderboard index", read, content)


@FUZZ
@given(st.data())
def test_the_carbon_table_reader(data):
    from energy_index.steps.carbon import grid_intensities

    whole = _document(CARBON_FIXTURE / CARBON_PATH)
    original = {code: whole[code] for code in ("ABW", "DEU", "FRA")}
    content = data.draw(mutated(original))
    _reads("carbon table", lambda c: grid_intensities(upstream_file(c, path=CARBON_PATH)), content)


@FUZZ
@given(st.data())
def test_the_published_copy_reader(data):
    """As ``validate`` and ``audit`` read it, up to the rebuild: the file, then its checks (the
    impacts schema, or the index rules), then what is taken from it (task, schema, statistic)."""
    from energy_index.documents.editorial import editorial_text
    from energy_index.documents.index import stated_itl_statistic
    from energy_index.documents.invariants import index_problems
    from energy_index.documents.schemas import IMPACTS_SCHEMA, index_schema, schema_problems
    from energy_index.flows.audit import (
        checked_published,
        file_problems,
        published_copy,
        refuse_invalid,
        task_of,
    )
    from energy_index.model import Access

    content = data.draw(mutated(_document(PUBLISHED)))

    def read(content: bytes) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "index.json"
            path.write_bytes(content)
            file_problems(path)  # validate
            document = published_copy(str(path), access=Access(today="2026-12-04"))  # audit
        if document.get("kind") == "impacts":
            checked_published(str(path), document, schema=IMPACTS_SCHEMA)
            return
        if schema_problems(document, schema=index_schema(document)):
            refuse_invalid(str(path), document)
        index_problems(document)
        task_of(document, name=str(path))
        float(document.get("itl_deadline_ms", 0))
        stated_itl_statistic(document, editorial_text())

    _reads("published copy", read, content)


@pytest.fixture(scope="module")
def snapshot_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of the task file and the leaderboard index, whose snapshot.json is fuzzed."""
    folder = tmp_path_factory.mktemp("fuzzed-snapshot")
    for path in (TASK_PATH, INDEX_PATH):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes((GOLDEN / path).read_bytes())
    return folder


@FUZZ
@given(st.data())
def test_the_snapshot_manifest_reader(snapshot_folder, data):
    from energy_index.io.snapshots import upstream_snapshot

    manifest = json.loads((GOLDEN / SNAPSHOT_MANIFEST).read_bytes())
    manifest["files"] = {p: manifest["files"][p] for p in (TASK_PATH, INDEX_PATH)}
    for path in (TASK_PATH, INDEX_PATH):  # the copies' own figures: a valid start
        content = (GOLDEN / path).read_bytes()
        manifest["files"][path]["sha256"] = hashlib.sha256(content).hexdigest()
        manifest["files"][path]["bytes"] = len(content)
    content = data.draw(mutated(manifest))

    def read(content: bytes) -> None:
        (snapshot_folder / SNAPSHOT_MANIFEST).write_bytes(content)
        upstream_snapshot(snapshot_folder, task="lm-arena-chat")

    _reads("snapshot.json", read, content)


def test_zz_every_reader_was_tried():
    """Runs last in the file: each reader was given its inputs (make fuzz prints the counts)."""
    readers = {"task file", "per-model file", "leaderboard index", "carbon table",
               "published copy", "snapshot.json"}  # fmt: skip
    if set(TRIED) != readers:
        pytest.skip("run with the whole file")
    assert all(TRIED[name] >= 1 for name in readers)
    print(
        "\nfuzz: "
        + ", ".join(f"{name} {TRIED[name]} ({REFUSED[name]} refused)" for name in sorted(readers))
        + f"; {sum(TRIED.values())} inputs in all, none raised anything but the tool's errors"
    )
