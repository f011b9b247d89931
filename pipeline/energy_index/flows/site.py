"""The published site: the report of every task, and a static JSON API with a Data Package.

    index.html                          the front page: a link to every task's page and the API
    tasks/<task>/index.html             the report of each task's index, with links to the other
                                        tasks, its downloads, the schemas and the API
    api/v1/index.json                   every API file with its schema (or its Data Package)
    api/v1/tasks/<task>/index.report.json, index.parquet   its build report, its rows as Parquet
    schemas/<name>.schema.json          every JSON Schema the API's files answer to
    api/v1/tasks/<task>/index.json      each task's index (for --index's task: that file's bytes)
    api/v1/tasks/<task>/deadlines.json  its deadline sweep (schemas/deadlines.schema.json)
    api/v1/tasks/<task>/profiles.json   its latency profiles at the index's ITL statistic
                                        (schemas/profiles.schema.json; build --profiles: all)
    api/v1/tasks/<task>/responses.json  its energy per response (schemas/responses.schema.json)
    api/v1/tasks/<task>/index.csv       its rows as CSV: the Data Package's tables
    api/v1/models/<slug>.json           one model: each task's row per GPU and its curves
                                        (schemas/model.schema.json)
    api/v1/tasks/<task>/impacts.json    measured GPU energy beside estimated server and facility
                                        ranges, the grid intensity of every country once
                                        (schemas/impacts.schema.json), and as CSV; the carbon
                                        per country is applied by the page, not listed (the
                                        files impacts/<ISO3>.json of format 1 grew with
                                        rows × countries: 24 MB of 40 for the real data)
    api/v1/tasks/<task>/plan.json       the plan at each load of a grid, 10² to 10⁶ output
                                        tokens/s (schemas/plan-grid.schema.json, docs/plan.md)
    cards/<task>/<slug>/index.html      a model's cards, one per pick (#<gpu>): measured figure,
                                        estimated ranges, deadline and statistic, upstream
                                        commit, how to verify, what they share said once
    cards/<task>/index.html             a token task's card notes: what every card would repeat
                                        (per response, carbon for any country), said once
    datapackage.json                    Frictionless Data Package: tables, fields, licence
    style.css                           the report's style sheet, which every card links

The JSON files the site writes are compact (no whitespace between values: indentation was a
third of their bytes, issue 36); the index and its build report are the bytes given. Every JSON
file is checked against its schema before anything is written, and the directory is
replaced whole (``emit.write_directory``): a failure leaves the previous site as it was. The
tasks other than --index's are built from the same snapshot with the same settings, their dates
taken from the snapshot, as ``energy-index build --all-tasks`` would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from energy_index.documents.editorial import editorial_text, every_task, is_diffusion, task_text
from energy_index.documents.index import (
    DIFFUSION_KIND,
    MODEL_VERSION,
    curves_by_field,
    serialized,
)
from energy_index.documents.invariants import curves_problems, plan_grid_problems
from energy_index.documents.schemas import (
    DIFFUSION_EXTRA_SCHEMAS,
    DIFFUSION_INDEX_SCHEMA,
    DIFFUSION_REPORT_SCHEMA,
    INDEX_SCHEMA,
    MODEL_SCHEMA,
    PLAN_GRID_SCHEMA,
    REPORT_SCHEMA,
    SCHEMAS,
    refused,
    schema_document,
    schema_path,
)
from energy_index.documents.tables import (
    DIFFUSION_TABLES,
    impacts_table_bytes,
    rows_table_bytes,
    table_bytes,
)
from energy_index.errors import SourceError, shown
from energy_index.flows.build import assembled, collector_paused, index_stages, inputs_of
from energy_index.flows.diffusion import diffusion_stages
from energy_index.flows.diffusion_extras import diffusion_curves_of
from energy_index.flows.extras import profile_deadlines, profiles_of, responses_of
from energy_index.flows.impacts import impacts_built
from energy_index.flows.outputs import refuse_outputs_inside, refuse_outputs_inside_inputs
from energy_index.flows.plan import plan_grid
from energy_index.flows.records import BuildSettings, DiffusionStages, Stages
from energy_index.flows.report import (
    IndexBeside,
    diffusion_inputs,
    diffusion_page_extras,
    index_beside,
    refuse_other_snapshot,
    settings_of,
)
from energy_index.io.files import write_directory
from energy_index.io.manifest import Checks, read_manifest
from energy_index.io.snapshots import snapshot_directory
from energy_index.io.source import resolved_snapshot
from energy_index.model import EXTRAS, Access, Target
from energy_index.pages.cards import (
    CardPlace,
    card_html,
    card_pages,
    card_path,
    notes_html,
    notes_path,
    shown_countries,
)
from energy_index.pages.diffusion import diffusion_card, diffusion_page, diffusion_title
from energy_index.pages.navigation import SITE_STYLE, Pick, back_links, front_page, task_links
from energy_index.pages.page import page_style, page_title, report_html
from energy_index.settings import (
    CARBON_SNAPSHOT,
    CURVES_NAME,
    DEADLINES_NAME,
    PLAN_NAME,
    PROFILES_NAME,
    RESPONSES_NAME,
)
from energy_index.steps.curves import concurrency_curves
from energy_index.steps.derive import slug
from energy_index.steps.diffusion import output_of
from energy_index.steps.diffusion import row_schema as output_row_schema
from energy_index.steps.diffusion_extras import LAYOUT as DIFFUSION_LAYOUT

API = "api/v1"
# The report's style sheet and the site's marks, once: each card links it (from
# cards/<task>/<slug>/index.html).
STYLE_SHEET = "style.css"
CARD_STYLE = f"../../../{STYLE_SHEET}"
# Every file of the site with its sha256: what a reader can check a copy against, and what
# marks the folder as one this tool wrote, so that the next `site` may replace it whole.
SITE_MANIFEST = "files.json"
LICENCE_URL = "https://www.apache.org/licenses/LICENSE-2.0"
_JSON_TYPES = {"number": "number", "integer": "integer", "string": "string"}


def site_files(
    index: Path, source: Path, *, carbon: Path = Path(CARBON_SNAPSHOT)
) -> dict[str, bytes]:
    """Every file of the site, by its path inside the site, all checked.

    Example: ``sorted(site_files(Path("output/index.json"), snapshot))[:2]``
    → ``["api/v1/models/deepseek-v3-1.json", "api/v1/models/gemma-3-12b.json"]``
    """
    beside = index_beside(index)
    settings = settings_of(beside)
    files: dict[str, bytes] = {}
    models: dict[str, dict[str, Any]] = {}
    tables = []
    editorial = editorial_text()
    tasks = _tasks(settings.task, source)
    # Each task's page by its own name (its title), on the front page and every link to it.
    pages = {f"tasks/{task}/index.html": _page_name(editorial, task) for task in tasks}
    # Each page links the schemas of its kind's files.
    own = (DIFFUSION_INDEX_SCHEMA, DIFFUSION_REPORT_SCHEMA, *DIFFUSION_EXTRA_SCHEMAS.values())
    schemas = [f"schemas/{name}" for name in SCHEMAS if name not in own]
    diffusion_schemas = [f"schemas/{name}" for name in own]
    # A diffusion task's page links every page; a token task's the token tasks' alone, as
    # before the diffusion kind: its bytes stay those of the index it documents (the front
    # page lists them all).
    token_pages = {
        path: name for path, name in pages.items() if not is_diffusion(editorial, _task_of(path))
    }
    for task in tasks:
        if is_diffusion(editorial, task):
            tables.append(
                (
                    task,
                    _diffusion_files(
                        files, task, settings, source, beside, pages, diffusion_schemas, carbon
                    ),
                )
            )
            continue
        task_settings = _settings_for(settings, task)
        stages = index_stages(source, settings=task_settings)
        document, report, index_bytes = _given_or_built(
            beside, stages, task_settings, given=task == settings.task, source=source
        )
        base = f"{API}/tasks/{task}"
        impacts = impacts_built(stages, document, index_bytes=index_bytes, carbon=carbon)
        inputs = inputs_of(
            stages, document=document, report=report, name=f"{base}/index.json", impacts=impacts
        )
        here = f"tasks/{task}/index.html"
        links = _links(task, document, pages=token_pages, downloads=DOWNLOADS, schemas=schemas)
        files[here] = report_html(replace(inputs, links=links)).encode("utf-8")
        # The page's configurations (a dict per stable configuration) go once the page is drawn:
        # kept beside every file made, they set the peak RSS (1.19 GiB at 10⁵ many-groups).
        sweep, plan_curves = inputs.sweep, inputs.plan_curves
        del inputs
        files[f"{base}/index.json"] = index_bytes
        files[f"{base}/index.report.json"] = serialized(dict(report))
        files[f"{base}/index.parquet"] = table_bytes(document["rows"], format="parquet")
        files[f"{base}/deadlines.json"] = serialized(dict(sweep), compact=True)
        files[f"{base}/{PROFILES_NAME}"] = serialized(
            # At the index's ITL statistic: all four were 4 picks per row and deadline, 37 % of
            # the site at 10⁵ configurations; the page re-picks on any (build --profiles: all).
            profiles_of(
                stages,
                profile_deadlines((task_settings.itl_deadline_ms,)),
                only=task_settings.itl_statistic,
            ),
            compact=True,
        )
        files[f"{base}/{RESPONSES_NAME}"] = serialized(responses_of(stages), compact=True)
        files[f"{base}/index.csv"] = table_bytes(document["rows"], format="csv")
        files[f"{base}/impacts.json"] = serialized(impacts, compact=True)
        files[f"{base}/impacts.csv"] = impacts_table_bytes(impacts, format="csv")
        plans = plan_grid(
            stages,
            Target(task_settings.itl_statistic, task_settings.itl_deadline_ms),
            curves=plan_curves,  # the page's planner's: the same stages' curves
        )
        del plan_curves  # a dict per stable configuration, as the page's were
        refused(plan_grid_problems(plans), schema=PLAN_GRID_SCHEMA)
        files[f"{base}/{PLAN_NAME}"] = serialized(plans, compact=True)
        shown = shown_countries(impacts["carbon_source"]["countries"])
        for path, model_picks in card_pages(task, document["rows"], impacts["rows"]):
            back = back_links(here=path, task_page=here, task_name=pages[here])
            files[path] = card_html(
                task,
                document,
                model_picks,
                impacts,
                CardPlace(stages.snapshot.commit, API, CARD_STYLE, back),
                shown=shown,
                statistic=task_settings.itl_statistic,
            ).encode("utf-8")
        notes = notes_path(task)
        files[notes] = notes_html(
            task,
            document,
            impacts,
            CardPlace(
                stages.snapshot.commit,
                API,
                f"../../{STYLE_SHEET}",
                back_links(here=notes, task_page=here, task_name=pages[here]),
            ),
        ).encode("utf-8")
        tables.append((task, document))
        _add_models(models, task, document["rows"], concurrency_curves(stages.stability.stable))
    for name, model in models.items():
        refused(curves_problems(model, schema=MODEL_SCHEMA), schema=MODEL_SCHEMA)
        files[f"{API}/models/{name}.json"] = serialized(model, compact=True)
    files["datapackage.json"] = serialized(data_package(tables, files), compact=True)
    for name in SCHEMAS:
        files[f"schemas/{name}"] = schema_path(name).read_bytes()
    files[API_INDEX] = serialized(
        api_index(files, diffusion=[t for t, d in tables if _is_diffusion_index(d)]), compact=True
    )
    files["index.html"] = front_page(
        editorial["site"],
        tasks=pages,
        units={path: _unit(editorial, _task_of(path)) for path in pages},
        picks={
            f"tasks/{task}/index.html": _picks(editorial, task, document)
            for task, document in tables
        },
        planner=f"{next(iter(token_pages or pages))}#planner",
        style=page_style(),
        extra={
            "Every API endpoint, with its schema (api/v1/index.json)": API_INDEX,
            "Data Package (datapackage.json)": "datapackage.json",
        },
    ).encode("utf-8")
    files[".nojekyll"] = b""
    files[STYLE_SHEET] = (page_style() + SITE_STYLE).encode("utf-8")
    files[SITE_MANIFEST] = serialized(
        {
            "generator": "energy-index site",
            "files": {
                name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())
            },
        }
    )
    return dict(sorted(files.items()))


# What each task's page offers to download: label, file name in api/v1/tasks/<task>/.
DOWNLOADS = (
    ("The index (JSON)", "index.json"),
    ("Its rows as CSV", "index.csv"),
    ("Its rows as Parquet", "index.parquet"),
    ("The build report", "index.report.json"),
    ("Deadline sweep", DEADLINES_NAME),
    ("Latency profiles", PROFILES_NAME),
    ("Energy per response", RESPONSES_NAME),
    ("Estimated impacts", "impacts.json"),
    ("Estimated impacts as CSV", "impacts.csv"),
    ("Plans at a grid of loads", PLAN_NAME),
)
API_INDEX = f"{API}/index.json"
# The schema of each API file, by its name (or its folder's, for the per-model files; an
# extra's, as model.EXTRAS declares it); a table (CSV, Parquet) is described by the Data Package.
_SCHEMA_OF = {
    **{extra.name: extra.schema for extra in EXTRAS.values() if extra.name},
    "index.json": INDEX_SCHEMA,
    "index.report.json": REPORT_SCHEMA,
    PLAN_NAME: PLAN_GRID_SCHEMA,
    "models": MODEL_SCHEMA,
}


def api_index(files: Mapping[str, bytes], *, diffusion: Sequence[str] = ()) -> dict[str, Any]:
    """api/v1/index.json: every file of the API with its schema (a path in the site) or, for
    a table, the Data Package that describes it. ``diffusion``: the tasks whose index is a
    diffusion index (its own schemas)."""
    endpoints = []
    for path in sorted(files):
        if not path.startswith(f"{API}/"):
            continue
        name, folder = path.rsplit("/", 1)[-1], path.rsplit("/", 2)[-2]
        of = _DIFFUSION_SCHEMA_OF if folder in diffusion else _SCHEMA_OF
        schema = of.get(folder) or of.get(name)
        endpoints.append(
            {
                "path": path,
                "media_type": "application/json"
                if name.endswith(".json")
                else _MEDIA[name.rsplit(".", 1)[-1]],
                "schema": f"schemas/{schema}" if schema and name.endswith(".json") else None,
                "described_by": None if name.endswith(".json") else "datapackage.json",
            }
        )
    return {
        "version": "1",
        "kind": "api index",
        "note": "Every path is relative to the site's root.",
        "schemas": [f"schemas/{name}" for name in SCHEMAS],
        "endpoints": endpoints,
    }


_DIFFUSION_SCHEMA_OF = {
    **{
        form.name: form.schema
        for extra in EXTRAS.values()
        if (form := extra.for_diffusion()) and form.name
    },
    "index.json": DIFFUSION_INDEX_SCHEMA,
    "index.report.json": DIFFUSION_REPORT_SCHEMA,
}
_MEDIA = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}


def _tasks(first: str, source: Path) -> list[str]:
    """The index's task, then every other task with an index that the snapshot holds, the
    token tasks first (a task upstream deleted, which regeneration dropped from the snapshot,
    has no page)."""
    held = set(read_manifest(snapshot_directory(source), checks=Checks.PROVENANCE).tasks())
    return [first, *(t for t in every_task(editorial_text()) if t != first and t in held)]


def _task_of(page: str) -> str:
    return page.split("/")[1]  # tasks/<task>/index.html


def _page_name(editorial: dict[str, Any], task: str) -> str:
    """A task's page by its own name (its title): the unit, then the workload."""
    if is_diffusion(editorial, task):
        entry = editorial["diffusion"]["tasks"][task]
        return diffusion_title(output_of(task, entry), entry["source_workload"])
    return page_title(task_text(editorial, task)["source_workload"])


def _picks(editorial: dict[str, Any], task: str, document: Mapping[str, Any]) -> list[Pick]:
    """A task's picks as the front page shows them: the figure in the task's unit (per million
    output tokens, per image, per video), the model, the GPU and the card."""
    field = "wh_per_million_output_tokens"
    if is_diffusion(editorial, task):
        field = f"wh_per_{editorial['diffusion']['tasks'][task]['output']}"
    return [
        Pick(row[field], row["model"], row["gpu"], card_path(task, row)) for row in document["rows"]
    ]


def _unit(editorial: dict[str, Any], task: str) -> str:
    if is_diffusion(editorial, task):
        return str(editorial["diffusion"]["tasks"][task]["unit"])
    return str(editorial["unit"])


def _settings_for(settings: BuildSettings, task: str) -> BuildSettings:
    """What another task of the site is built with: a token task, the settings of the index
    given (its deadline and statistic) when that is a token index; a diffusion task, or a token
    task beside a diffusion index, its defaults (each diffusion task has its own deadline)."""
    if task == settings.task:
        return settings
    editorial = editorial_text()
    if is_diffusion(editorial, task) or is_diffusion(editorial, settings.task):
        return BuildSettings(task=task)
    return replace(settings, task=task)


def _links(
    task: str,
    document: Mapping[str, Any],
    *,
    pages: Mapping[str, str],
    downloads: Sequence[tuple[str, str]],
    schemas: list[str],
) -> str:
    """The links of a task's page: ``pages``, its ``downloads`` (label, file name in its API
    folder), ``schemas``, the API's list and a card per pick."""
    base = f"{API}/tasks/{task}"
    return task_links(
        here=f"tasks/{task}/index.html",
        tasks=pages,
        downloads={label: f"{base}/{name}" for label, name in downloads},
        schemas=schemas,
        cards={f"{row['model']} on {row['gpu']}": card_path(task, row) for row in document["rows"]},
        api_index=API_INDEX,
    )


def _given_or_built(
    beside: IndexBeside,
    stages: Stages | DiffusionStages,
    settings: BuildSettings,
    *,
    given: bool,
    source: Path,
) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """A task's index, its build report and the index's bytes: for --index's task the files
    given (once their snapshot is checked to be ``source``), for any other a build of
    ``stages`` with the snapshot's dates, as ``build --all-tasks`` would."""
    if given:
        refuse_other_snapshot(beside, stages, source=source)
        return beside.document, beside.report, beside.content
    built = assembled(stages, settings.dates(stages.snapshot))
    return built.document, built.report, built.index_bytes


# What a diffusion task's page offers to download: label, file name in api/v1/tasks/<task>/.
DIFFUSION_DOWNLOADS = (
    ("The index (JSON)", "index.json"),
    ("Its rows as CSV", "index.csv"),
    ("Its rows as Parquet", "index.parquet"),
    ("The build report", "index.report.json"),
    ("Deadline sweep", DEADLINES_NAME),
    ("Energy against batch latency", CURVES_NAME),
    ("Estimated impacts", "impacts.json"),
    ("Estimated impacts as CSV", "impacts.csv"),
)


def _diffusion_files(
    files: dict[str, bytes],
    task: str,
    settings: BuildSettings,
    source: Path,
    beside: IndexBeside,
    pages: Mapping[str, str],
    schemas: list[str],
    carbon: Path,
) -> dict[str, Any]:
    """A diffusion task's page, API files (the index, its report and tables, its deadline
    sweep, curves and impacts) and cards, added to ``files``; returns its index."""
    task_settings = _settings_for(settings, task)
    stages = diffusion_stages(source, settings=task_settings, editorial=editorial_text())
    document, report, index_bytes = _given_or_built(
        beside, stages, task_settings, given=task == settings.task, source=source
    )
    base = f"{API}/tasks/{task}"
    here = f"tasks/{task}/index.html"
    links = _links(task, document, pages=pages, downloads=DIFFUSION_DOWNLOADS, schemas=schemas)
    sweep, impacts = extras = diffusion_page_extras(
        stages, document, index_bytes=index_bytes, carbon=carbon
    )
    inputs = diffusion_inputs(
        stages,
        document=document,
        report=report,
        name=f"{base}/index.json",
        links=links,
        extras=extras,
    )
    files[here] = diffusion_page(inputs).encode("utf-8")
    files[f"{base}/index.json"] = index_bytes
    files[f"{base}/index.report.json"] = serialized(dict(report))
    files[f"{base}/{DEADLINES_NAME}"] = serialized(sweep, compact=True)
    files[f"{base}/{CURVES_NAME}"] = serialized(diffusion_curves_of(stages), compact=True)
    files[f"{base}/impacts.json"] = serialized(impacts, compact=True)
    files[f"{base}/impacts.csv"] = DIFFUSION_TABLES["impacts"](impacts, "csv")
    row_schema = output_row_schema(stages.output)
    for format in ("csv", "parquet"):
        files[f"{base}/index.{format}"] = rows_table_bytes(
            document["rows"], row_schema, format=format
        )
    sha256 = hashlib.sha256(index_bytes).hexdigest()
    commit, style = stages.snapshot.commit, CARD_STYLE
    for path, model_picks in card_pages(task, document["rows"], impacts["rows"]):
        back = back_links(here=path, task_page=here, task_name=pages[here])
        card = diffusion_card(
            stages.output, document, model_picks, sha256, CardPlace(commit, API, style, back)
        )
        files[path] = card.encode("utf-8")
    return document


def _add_models(
    models: dict[str, dict[str, Any]],
    task: str,
    rows: list[dict[str, Any]],
    curves: list[dict[str, Any]],
) -> None:
    names = {curve["model_id"]: curve["model"] for curve in curves}
    # Grouped once, in one pass each: a scan of every row per model grew with models².
    rows_of: dict[str, list[dict[str, Any]]] = {model_id: [] for model_id in names}
    curves_of: dict[str, list[dict[str, Any]]] = {model_id: [] for model_id in names}
    for row in rows:
        rows_of.setdefault(row["model_id"], []).append(row)
    for curve in curves:
        curves_of[curve["model_id"]].append(curve)
    for model_id, nickname in sorted(names.items()):
        name = slug(nickname)
        model = models.setdefault(
            name,
            {
                "version": MODEL_VERSION,
                "kind": "model",
                "model": nickname,
                "slug": name,
                "model_id": model_id,
                "tasks": [],
            },
        )
        if model["model_id"] != model_id:
            raise SourceError(
                f"models {shown(model['model_id'])} and {shown(model_id)} have the same slug "
                f"{shown(name)}: "
                f"their API files api/v1/models/{name}.json would collide"
            )
        model["tasks"].append(
            {
                "task": task,
                "index": f"../tasks/{task}/index.json",
                "rows": rows_of[model_id],
                "curves": curves_by_field(curves_of[model_id]),
            }
        )


def data_package(
    tables: Sequence[tuple[str, Mapping[str, Any]]], files: Mapping[str, bytes]
) -> dict[str, Any]:
    """The Data Package describing each task's rows as a CSV table, its fields and licence."""
    first = tables[0][1]["source"]
    return {
        "name": "energy-index",
        "title": "energy-index: energy per output token, per image and per video, per model "
        "and GPU",
        "description": "One row per (model, GPU type): for a language model task, the stable "
        "serving configuration with the lowest energy per output token whose median inter-token "
        "latency meets the deadline; for a diffusion task, the configuration with the lowest "
        "energy per image or per video whose batch latency meets the deadline; rebuilt from the "
        "ML.ENERGY Leaderboard. Each task's index, and for a language model task its deadline "
        "sweep and the per-model files, are in api/v1 beside this file as JSON.",
        "licenses": [
            {
                "name": "Apache-2.0",
                "path": LICENCE_URL,
                "title": first["licence"],
            }
        ],
        "sources": [{"title": first["name"], "path": first["url"]}],
        "resources": [
            *(_table(task, document, files) for task, document in tables),
            *(_impacts_table(task, files, counts=_counts(d)) for task, d in tables),
        ],
    }


def _counts(document: Mapping[str, Any]) -> tuple[str, ...]:
    """The integer columns of an index's impacts.csv: its GPUs (a diffusion index's layout)."""
    return DIFFUSION_LAYOUT if _is_diffusion_index(document) else ("num_gpus",)


def _impacts_table(
    task: str, files: Mapping[str, bytes], *, counts: tuple[str, ...]
) -> dict[str, Any]:
    """impacts.csv as a Data Package table: each column's status and boundary is its name's
    prefix (measured_gpu_…, estimated_server_…, estimated_facility_…); ``counts``: its integer
    columns."""
    path = f"{API}/tasks/{task}/impacts.csv"
    content = files[path]
    header = content.split(b"\n", 1)[0].decode("utf-8").split(",")
    text = {"row_id", "model", "gpu", "estimated_server_host_low_form"}
    text.add("estimated_server_host_high_form")
    fields = [
        {
            "name": name,
            "type": "string" if name in text else "integer" if name in counts else "number",
        }
        for name in header
    ]
    return {
        "name": f"{task}-impacts",
        "title": f"{task}: measured GPU energy and estimated server and facility ranges",
        "description": "Columns named measured_gpu_* are the index's measured figures; "
        "estimated_* columns are ranges built from cited factors (see impacts.json).",
        **_csv_resource(path, content, fields),
    }


def _table(task: str, document: Mapping[str, Any], files: Mapping[str, bytes]) -> dict[str, Any]:
    path = f"{API}/tasks/{task}/index.csv"
    content = files[path]
    # The fields of an index row, as its schema declares them (with their descriptions).
    row = _row_schema(task, document)
    fields = []
    # A field the schema does not require (a tail ITL) is a column only where the rows have it.
    present = set(document["rows"][0]) if document["rows"] else set(row["required"])
    for name, spec in row["properties"].items():
        if name not in present:
            continue
        field = {"name": name, "type": _JSON_TYPES[spec.get("type", "string")]}
        if "description" in spec:
            field["description"] = spec["description"]
        fields.append(field)
    return {
        "name": f"{task}-index",
        "title": f"{document['source']['workload']}: the index rows",
        **_csv_resource(path, content, fields),
    }


def _is_diffusion_index(document: Mapping[str, Any]) -> bool:
    return document.get("kind") == DIFFUSION_KIND


def _row_schema(task: str, document: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of one row of ``document``, a token index or a diffusion index of ``task``."""
    if _is_diffusion_index(document):
        return output_row_schema(output_of(task, editorial_text()["diffusion"]["tasks"][task]))
    row: dict[str, Any] = schema_document(INDEX_SCHEMA)["$defs"]["rowFields"]
    return row


def _csv_resource(path: str, content: bytes, fields: list[dict[str, Any]]) -> dict[str, Any]:
    """What every CSV table of the Data Package says about its file: where, what, checksum."""
    return {
        "path": path,
        "format": "csv",
        "mediatype": "text/csv",
        "encoding": "utf-8",
        "bytes": len(content),
        "hash": f"sha256:{hashlib.sha256(content).hexdigest()}",
        "schema": {"fields": fields, "primaryKey": ["row_id"]},
    }


def write_site(
    index: Path,
    *,
    source: str,
    out: Path,
    access: Access,
    carbon: Path = Path(CARBON_SNAPSHOT),
    force: bool = False,
) -> dict[str, bytes]:
    """``site``: write every file of the site into ``out``, replaced whole; returns them. A
    file of the previous site changed by hand is not overwritten (UsageError) unless ``force``.
    """
    tasks = every_task(editorial_text())
    outputs = {"site": out}
    refuse_outputs_inside_inputs(source, carbon, outputs)
    snapshot = resolved_snapshot(source, tasks=tasks, access=access)
    refuse_outputs_inside(snapshot, outputs)
    with collector_paused():
        files = site_files(index, snapshot, carbon=carbon)
    write_directory(out, files, manifest=SITE_MANIFEST, keep_edits=not force)
    return files
