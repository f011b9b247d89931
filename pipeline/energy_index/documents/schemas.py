"""The JSON Schemas the documents answer to (schemas/*.json), and the check against them.

The schemas are package data, read once per process. Checking is pure: a document in, its
problems out, in a stable order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from energy_index.errors import SchemaViolation, shown
from energy_index.model import EXTRAS

if TYPE_CHECKING:
    import jsonschema
    import jsonschema_rs
    from referencing import Registry

INDEX_SCHEMA = EXTRAS["formats"].schema  # the index's, whose rows its tables are
EXTENDED_SCHEMA = EXTRAS["extended"].schema
# The version of an index with robustness figures (build --extended).
EXTENDED_VERSION = "1-extended"
DEADLINES_SCHEMA = EXTRAS["sweep"].schema
CURVES_SCHEMA = EXTRAS["curves"].schema
MODEL_SCHEMA = "model.schema.json"  # the site API's api/v1/models/<slug>.json
REPORT_SCHEMA = "report.schema.json"  # the build report beside an index
IMPACTS_SCHEMA = EXTRAS["impacts"].schema
PROFILES_SCHEMA = EXTRAS["profiles"].schema
RESPONSES_SCHEMA = EXTRAS["responses"].schema
PLAN_GRID_SCHEMA = "plan-grid.schema.json"  # the site API's tasks/<task>/plan.json
DIFFUSION_INDEX_SCHEMA = "diffusion-index.schema.json"  # energy per image or per video
DIFFUSION_REPORT_SCHEMA = "diffusion-report.schema.json"  # its build report
SCHEMAS: tuple[str, ...] = (
    INDEX_SCHEMA, EXTENDED_SCHEMA, DEADLINES_SCHEMA, CURVES_SCHEMA, MODEL_SCHEMA, REPORT_SCHEMA,
    IMPACTS_SCHEMA, PROFILES_SCHEMA, RESPONSES_SCHEMA, PLAN_GRID_SCHEMA, DIFFUSION_INDEX_SCHEMA,
    DIFFUSION_REPORT_SCHEMA,
)  # fmt: skip


# Every file this tool writes, by the ``kind`` its first keys carry, and the schema it answers
# to. The index and the build report carry none (their format is published as it is): the index
# is told by its ``version`` (``index_schema``), the build report by its ``report`` title.
KIND_SCHEMAS = {
    "deadline sweep": DEADLINES_SCHEMA,
    "concurrency curves": CURVES_SCHEMA,
    "latency profiles": PROFILES_SCHEMA,
    "energy per response": RESPONSES_SCHEMA,
    "impacts": IMPACTS_SCHEMA,
    "model": MODEL_SCHEMA,
    "plan-grid": PLAN_GRID_SCHEMA,
    "diffusion index": DIFFUSION_INDEX_SCHEMA,
}

# The extras written beside a diffusion index (model.Variant): their kinds and schemas, from
# the extras' declarations.
DIFFUSION_EXTRA_SCHEMAS = {
    form.kind: form.schema for extra in EXTRAS.values() if (form := extra.diffusion) is not None
}
SCHEMAS = (*SCHEMAS, *DIFFUSION_EXTRA_SCHEMAS.values())
KIND_SCHEMAS |= DIFFUSION_EXTRA_SCHEMAS
# The deadline sweeps of either kind: their groups written by field, with rules beyond the schema.
SWEEP_SCHEMAS = (DEADLINES_SCHEMA, EXTRAS["sweep"].diffusion.schema)  # type: ignore[union-attr]
# The curves of either kind and the site's model files (which hold curves): points by field.
CURVES_SCHEMAS = (CURVES_SCHEMA, EXTRAS["curves"].diffusion.schema, MODEL_SCHEMA)  # type: ignore[union-attr]
# The files held to rules beyond their schema (documents.invariants), by schema: what validate
# calls those rules.
RULES = {
    INDEX_SCHEMA: "the index rules",
    EXTENDED_SCHEMA: "the index rules",
    DIFFUSION_INDEX_SCHEMA: "the index rules",
    PROFILES_SCHEMA: "the latency profiles' rules",
    PLAN_GRID_SCHEMA: "the plan grid's rules",
    **dict.fromkeys(SWEEP_SCHEMAS, "the deadline sweep's rules"),
    **dict.fromkeys(CURVES_SCHEMAS, "the curves' rules"),
}

# Kinds this tool wrote once and no longer does, with what replaced them: validate says so.
RETIRED_KINDS = {
    "impacts-country": "the site's impacts/<ISO3>.json of impacts format 1, no longer written "
    "since format 2: impacts.json lists each country's grid intensity once",
}
# Versions of a kind this tool wrote once and no longer does (kind, version): validate and audit
# say so in one sentence, not one schema violation per row.
RETIRED_VERSIONS = {
    ("impacts", "2"): "impacts format 2, each row's carbon block with the facility's factor "
    "bounds again, no longer written since format 3: they are named once, in the facility "
    "block; build --impacts writes format 3",
    ("diffusion impacts", "1"): "the diffusion impacts format 1, each row's carbon block with "
    "the facility's factor bounds again, no longer written since format 2: they are named "
    "once, in the facility block; build --impacts writes format 2",
    ("impacts", "1"): "impacts format 1, each row's carbon by country, no longer written since "
    "format 2: impacts.json lists each country's grid intensity once (carbon_per_country says "
    "how it applies); build --impacts writes format 3",
    ("latency profiles", "1"): "latency profiles format 1, a record per pick and per GPU "
    "ratio, no longer written since format 2: a list per field over the deadlines, per (model, "
    "GPU) and statistic; build --profiles writes format 3",
    ("latency profiles", "2"): "latency profiles format 2, each picks object with its "
    "deadlines again, no longer written since format 3: a pick's lists are over the document's "
    "deadlines_ms; build --profiles writes format 3",
    ("plan-grid", "1"): "plan.json format 1, an object per plan, no longer written since "
    "format 2: each (model, GPU)'s plans by field, a list per field over the grid's loads; "
    "site writes format 3",
    ("plan-grid", "2"): "plan.json format 2, each (model, GPU)'s plans by field with the "
    "grid's loads, the plan's status beside its GPU figures' and their boundary at every load, "
    "no longer written since format 3: the loads, the status and the boundary once; site "
    "writes format 3",
    ("deadline sweep", "1"): "deadlines.json format 1, an object per deadline and group, no "
    "longer written since format 2: each group's cells by field, a list per key and per row "
    "field over the deadlines; build --itl-deadline-ms a,b writes format 2",
    ("concurrency curves", "1"): "curves.json format 1, an object per point, no longer "
    "written since format 2: each curve's points by field, a list per field; build --curves "
    "writes format 2",
    ("diffusion curves", "1"): "the diffusion curves.json format 1, an object per point, no "
    "longer written since format 2: each curve's points by field, a list per field; build "
    "--curves writes format 2",
    ("model", "1"): "the site's model file format 1, its curves' points an object each, no "
    "longer written since format 2: each curve's points by field, a list per field; site "
    "writes format 2",
    ("diffusion deadline sweep", "1"): "the diffusion deadlines.json format 1, an object per "
    "deadline and group, no longer written since format 2: each group's cells by field, a list "
    "per key and per row field over the deadlines; build --deadline-s a,b writes format 2",
}


SHOWN_PROBLEMS = 20  # the problems of a refused document a message lists; the rest are counted
# The problems of a document that are described; the others are only counted. Describing one
# costs about a millisecond (the reference validator words it), so 50,000 bad rows took 51 s.
MAX_PROBLEMS = 100


class Problems(list[str]):
    """The first problems of a document (at most MAX_PROBLEMS), and how many it has in all.

    A list, so that ``problems == []`` still says "none"; ``total`` counts those not described.
    """

    def __init__(self, described: Sequence[str] = (), *, total: int | None = None) -> None:
        super().__init__(described[:MAX_PROBLEMS])
        self.total = max(len(described), total or 0)

    @property
    def more(self) -> int:
        """How many problems there are beyond those described."""
        return self.total - len(self)


def listed_problems(problems: Sequence[str]) -> str:
    """The first SHOWN_PROBLEMS problems, one an indented line, and how many more there were
    (of a Problems, its ``total``).

    Example: ``listed_problems(["$.a: bad"])`` → ``"\\n  $.a: bad"``.
    """
    total = problems.total if isinstance(problems, Problems) else len(problems)
    lines = "".join(f"\n  {problem}" for problem in problems[:SHOWN_PROBLEMS])
    more = total - min(len(problems), SHOWN_PROBLEMS)
    return lines + (f"\n  … and {more} more" if more > 0 else "")


def no_longer_written(document: Any) -> str | None:
    """What a file of a kind or version this tool no longer writes was, in words; else None."""
    kind, version = document.get("kind"), document.get("version")
    if not isinstance(kind, str):
        return None
    return RETIRED_KINDS.get(kind) or (
        RETIRED_VERSIONS.get((kind, version)) if isinstance(version, str) else None
    )


# Files this tool writes that have no schema: validate says what they are, not that they break
# the index's (a file without 'kind' was held to it, and failed on every field).
UNCHECKED_KINDS = {
    "plan": "energy-index plan --json: a plan has no schema; the site's plan.json, kind "
    "'plan-grid', has one",
    "diffusion plan": "energy-index plan --json of a diffusion task (images per second, "
    "videos per hour): a plan has no schema",
    "api index": "the site's api/v1/index.json, the list of its endpoints, has no schema",
    "carbon-changelog": "refresh-carbon's changelog has no schema",
    "names": "energy-index names --json, a snapshot's names, has no schema",
}

# Those without a 'kind', told by a key only they have.
UNCHECKED_BY_KEY = {
    "outcome": "audit --json's output has no schema",
    "resources": "the site's datapackage.json, a Data Package, has no schema here",
    "$schema": "a JSON Schema, not a file held to one",
    "rows_added": "regenerate's changelog has no schema",
    "generator": "the site's files.json, the sha256 of each of its files, has no schema",
    "commit_date": "a snapshot's snapshot.json has no schema",
}


def index_schema(document: Any) -> str:
    """The schema an index document is held to, told by its content: an extended index (its
    version) to index-extended.schema.json, anything else to index.schema.json."""
    extended = isinstance(document, dict) and document.get("version") == EXTENDED_VERSION
    return EXTENDED_SCHEMA if extended else INDEX_SCHEMA


MESSAGE_CHARACTERS = 240  # of one problem's message; the middle of a longer one is left out
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# jsonschema skips a format it has no checker for; these are the ones the schemas rely on.
REQUIRED_FORMATS = ("date",)


def schema_path(name: str) -> Path:
    """A schema shipped with the package (wheel) or beside it in the repository (checkout)."""
    packaged = resources.files("energy_index").joinpath("schemas", name)
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[3] / "schemas" / name


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    # The reference: imported only where a document is refused, or by the tests.
    import jsonschema

    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    missing = [f for f in REQUIRED_FORMATS if f not in checker.checkers]
    if missing:
        raise RuntimeError(f"jsonschema has no checker for format(s) {missing}")
    # The schema itself is checked against the 2020-12 meta-schema by the tests, not here on
    # every run (a tenth of a cold build).
    schema = _rows_inlined(schema_document(name))
    return jsonschema.Draft202012Validator(schema, format_checker=checker, registry=_registry(name))


@cache
def schema_document(name: str) -> dict[str, Any]:
    # Read once per process; callers build new dicts from it and never change it.
    return dict(json.loads(schema_path(name).read_text("utf-8")))


def _registry(name: str) -> Registry:
    """The other schemas a schema refers to (``index.schema.json#/$defs/row``), by their $id."""
    from referencing import Registry, Resource

    others = [schema_document(other) for other in SCHEMAS if other != name]
    return Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in others
    )


@cache
def _compiled(name: str) -> jsonschema_rs.Validator:
    """The same schema compiled by jsonschema-rs, formats checked: the check every build runs.

    A hundred times faster than jsonschema on a large index (3.1 s → 0.03 s at 10⁶
    configurations), and jsonschema is not even imported unless a document is refused.
    """
    import jsonschema_rs

    # Every schema, itself too: the others refer to it, and the registry resolves them eagerly.
    schemas = [schema_document(each) for each in SCHEMAS]
    registry = jsonschema_rs.Registry([(schema["$id"], schema) for schema in schemas])
    return jsonschema_rs.Draft202012Validator(
        _rows_inlined(schema_document(name)), validate_formats=True, registry=registry
    )


def _rows_inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The same schema with ``rows.items`` holding the row schema itself instead of a $ref.

    Resolving the reference once per row is an eighth of the check's time on a large index.
    """
    items = schema.get("properties", {}).get("rows", {}).get("items", {})
    reference = items.get("$ref", "") if isinstance(items, dict) else ""
    if not reference.startswith("#/$defs/") or len(items) != 1:
        return schema
    rows = {
        **schema["properties"]["rows"],
        "items": schema["$defs"][reference.removeprefix("#/$defs/")],
    }
    return {**schema, "properties": {**schema["properties"], "rows": rows}}


def schema_problems(document: Any, *, schema: str = INDEX_SCHEMA) -> Problems:
    """How the document breaks the schema, as 'path: message', in a stable order: the first
    MAX_PROBLEMS described, all of them counted (``total``).

    The compiled validator (jsonschema-rs) decides and counts; a document it refuses is
    described by jsonschema, the reference (tests/test_emit.py holds the two to the same
    verdict on a corpus). The reference is slow (about a millisecond a bad row, and as much for
    every thousand good ones), so it is shown only the part of the document the first problems
    are in: of each top-level array, the items they name. Should the reference find nothing to
    say, the compiled validator's own messages are given: a disagreement refuses, it never lets
    a document through.

    Example: ``schema_problems(json.loads(Path("output/index.json").read_bytes())) == []``.
    """
    compiled = _compiled(schema)
    own: list[str] = []
    paths: list[tuple[Any, ...]] = []
    total = 0
    try:
        if compiled.is_valid(document):
            return Problems()
        for error in compiled.iter_errors(document):
            total += 1
            if len(own) < MAX_PROBLEMS:
                paths.append(tuple(error.instance_path))
                own.append(_problem(_json_path(error.instance_path), error.message))
    except ValueError as error:  # not JSON at all, e.g. a key that is not a string
        own, paths, total = [f"$: {error}"], [()], 1
    part, positions = _described_part(document, paths)
    described = [
        _problem(_json_path(_remapped(e.absolute_path, positions)), e.message)
        for e in _validator(schema).iter_errors(part)
        # A cut array's own problem is the cut's (plan.json's 13 loads cut to one are "too
        # short"): one of the document's would have kept it whole.
        if not (len(e.absolute_path) == 1 and e.absolute_path[0] in positions)
    ]
    return Problems(sorted(described) or sorted(own), total=total)


def _described_part(
    document: Any, paths: list[tuple[Any, ...]]
) -> tuple[Any, dict[str, list[int]]]:
    """The document with each top-level array cut to the items the problems at ``paths`` are
    in (its first item if none is named, so that no array becomes empty), and for each array
    cut, the positions its remaining items had."""
    if not isinstance(document, dict):
        return document, {}
    part, positions = dict(document), {}
    for key, value in document.items():
        if not isinstance(value, list) or not value:
            continue
        named = [p[1] for p in paths if len(p) >= 2 and p[0] == key and isinstance(p[1], int)]
        if any(p == (key,) for p in paths):
            continue  # a problem of the array itself: it is described whole
        kept = sorted(set(named)) or [0]
        part[key] = [value[i] for i in kept]
        positions[key] = kept
    return part, positions


def _remapped(path: Any, positions: dict[str, list[int]]) -> list[Any]:
    parts = list(path)
    if len(parts) >= 2 and parts[0] in positions and isinstance(parts[1], int):
        parts[1] = positions[parts[0]][parts[1]]
    return parts


def refused(problems: Problems, *, schema: str) -> None:
    """Raise SchemaViolation naming ``schema`` and its rules beyond it (``RULES``) unless
    ``problems`` (``documents.invariants``') is empty: how a build refuses its own document that
    validate would refuse, in validate's words."""
    if problems:
        rules = f" and {RULES[schema]}" if schema in RULES else ""
        raise SchemaViolation(schema=f"schemas/{schema}{rules}", problems=problems)


def checked(document: Any, *, schema: str = INDEX_SCHEMA) -> None:
    """Raise SchemaViolation naming every problem unless the document matches the schema."""
    problems = schema_problems(document, schema=schema)
    if problems:
        raise SchemaViolation(schema=f"schemas/{schema}", problems=problems)


def _json_path(parts: Any) -> str:
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:  # a key of the document: any text at all, so quoted unless a plain name
            text += f".{part}" if _PLAIN_KEY.fullmatch(part) else f"[{shown(part, quote=True)}]"
    return text


def _problem(path: str, message: str) -> str:
    """A validator's message quotes the offending value in full: a million-character name would
    give a million-character line, so the middle of a long one is left out (the message's end
    says which rule it broke)."""
    if len(message) > MESSAGE_CHARACTERS:
        half = MESSAGE_CHARACTERS // 2
        message = f"{message[:half]} … {message[-half:]}"
    if not message.isprintable():  # jsonschema-rs writes values as JSON: U+2028, C1 kept raw
        message = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in message)
    return f"{path}: {message}"
