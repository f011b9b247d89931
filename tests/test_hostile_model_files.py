"""Hostile per-model output-length files for ``build --responses`` (issue 26): negative, huge and
fractional counts, 10^6 and 10^7 bins, nesting 100,000 deep, NaN. The build always completes
(the index does not depend on these files); the file's picks are skipped, naming the file and
the field, or computed as finite figures; responses.json is valid JSON without NaN.

Found: a per-model file of 1 MiB or more is mapped, not read (io/snapshots.py), and the quick
reading called ``count`` on the mapping: AttributeError, a traceback instead of a build.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, changed_snapshot, invoke
from tests.test_responses import NEMOTRON_CHAT

ORIGINAL = (GOLDEN / NEMOTRON_CHAT).read_text("utf-8")


def _every_histogram(change) -> bytes:
    document = json.loads(ORIGINAL)
    for configuration in document["configurations"]:
        change(configuration["output_length_distribution"])
    return json.dumps(document).encode()


def _first_histogram(change) -> bytes:
    document = json.loads(ORIGINAL)
    change(document["configurations"][0]["output_length_distribution"])
    return json.dumps(document).encode()


def _bins(n: int):
    def change(histogram: dict) -> None:
        histogram["bins"], histogram["counts"] = list(range(n + 1)), [1] * n

    return change


HOSTILE = {
    "negative count": (
        lambda: _every_histogram(lambda h: h["counts"].__setitem__(0, -5)),
        "every count must be an integer >= 0",
    ),
    "fractional count": (
        lambda: _every_histogram(lambda h: h["counts"].__setitem__(0, 0.5)),
        "every count must be an integer >= 0",
    ),
    "counts of 1e300": (
        lambda: _every_histogram(lambda h: h.__setitem__("counts", [1e300] * len(h["counts"]))),
        "every count must be an integer >= 0",
    ),
    "a million bins": (lambda: _first_histogram(_bins(10**6)), "1000000 bins, more than"),
    "ten million bins": (lambda: _first_histogram(_bins(10**7)), "10000000 bins, more than"),
    "nested 100,000 deep": (
        lambda: ORIGINAL.replace(
            '"counts": [', '"x": ' + "[" * 10**5 + "]" * 10**5 + ', "counts": [', 1
        ).encode(),
        "nested too deeply",
    ),
    "NaN count": (
        lambda: ORIGINAL.replace('"counts": [', '"counts": [NaN, ', 1).encode(),
        "NaN at $.configurations[0].output_length_distribution.counts[0]",
    ),
    "NaN edge": (
        lambda: ORIGINAL.replace('"bins": [', '"bins": [NaN, ', 1).encode(),
        "NaN at $.configurations[0].output_length_distribution.bins[0]",
    ),
    "Infinity edge": (
        lambda: ORIGINAL.replace('"bins": [', '"bins": [-Infinity, ', 1).encode(),
        "Infinity",
    ),
}


def _responses(tmp_path: Path, content: bytes) -> tuple[object, list[dict]]:
    snapshot = changed_snapshot(GOLDEN, tmp_path / "s", {NEMOTRON_CHAT: content}, commit="1" * 40)
    out = tmp_path / "o" / "index.json"
    result = invoke("build", "--from", snapshot, "--responses", "--out", out)
    text = (tmp_path / "o" / "responses.json").read_text("utf-8") if result.exit_code == 0 else ""
    picks = json.loads(text, parse_constant=pytest.fail)["picks"] if text else []
    return result, picks


LONG = "ENERGY_INDEX_FUZZ_EXAMPLES" in os.environ  # make fuzz: the 100 MB file too (15 s)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_model_file_skips_its_picks_naming_the_file_and_field(tmp_path, case):
    if case == "ten million bins" and not LONG:
        pytest.skip("a 100 MB file: make fuzz runs it")
    make, says = HOSTILE[case]
    result, picks = _responses(tmp_path, make())
    assert result.exit_code == 0, result.output
    nemotron = [p for p in picks if p["model_id"] == "nvidia/NVIDIA-Nemotron-Nano-12B-v2"]
    assert len(nemotron) == 2
    for pick in nemotron:
        assert NEMOTRON_CHAT in pick["skipped"] and says in pick["skipped"], pick["skipped"]
    assert sum("skipped" not in p for p in picks) == 30  # every other pick computed


@pytest.mark.parametrize("count", [2**63 - 1, 10**25])
def test_counts_beyond_any_real_run_are_a_shape_and_give_finite_figures(tmp_path, count):
    """A histogram is a shape: counts of 2^63 - 1 or 10^25 each (Python integers, no overflow)
    are a uniform distribution, and its quantiles are finite lengths inside the bins."""
    result, picks = _responses(
        tmp_path, _every_histogram(lambda h: h.__setitem__("counts", [count] * len(h["counts"])))
    )
    assert result.exit_code == 0, result.output
    nemotron = [p for p in picks if p["model_id"] == "nvidia/NVIDIA-Nemotron-Nano-12B-v2"]
    for pick in nemotron:
        figures = pick["wh_per_response"]
        assert all(math.isfinite(v) and v > 0 for v in figures.values()), figures
        assert pick["requests"] == count * len(pick["histogram"]["counts"])


def test_a_model_file_of_a_mebibyte_or_more_is_read_as_a_small_one(tmp_path):
    """Padded past 1 MiB with spaces (then mapped, not read), the same file gives the same
    figures; it was an AttributeError."""
    _, small = _responses(tmp_path / "small", ORIGINAL.encode())
    padded = ORIGINAL.replace("{", "{" + " " * (1 << 20), 1).encode()
    assert len(padded) > 1 << 20
    result, large = _responses(tmp_path / "large", padded)
    assert result.exit_code == 0, result.output
    assert large == small


@pytest.mark.parametrize(("count", "shown"), [(-5, "-5"), (-1e300, "-1e+300"), ("7", "'7'")])
def test_a_bad_count_is_named_by_its_place_and_value(tmp_path, count, shown):
    """It said only `counts: every count must be an integer >= 0`: which of 50, and what it
    was, the reader of a 50-bin file had to find by hand."""
    result, picks = _responses(
        tmp_path, _first_histogram(lambda h: h["counts"].__setitem__(3, count))
    )
    assert result.exit_code == 0, result.output
    (skipped,) = {p["skipped"] for p in picks if "skipped" in p}
    assert skipped == (
        f"{NEMOTRON_CHAT}: configurations[0].output_length_distribution.counts[3]: {shown}, where "
        "every count must be an integer >= 0"
    )
