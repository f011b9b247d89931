"""Write the published row's generated copies from its declaration (steps/row_fields.py), so
that they cannot drift: the row part of schemas/index.schema.json ($defs/rowFields), the
field table of docs/design.md, the rows of schemas/diffusion-index.schema.json (from
steps/diffusion.py's row_fields), and the deadline sweeps' rows by field
(schemas/deadlines.schema.json, schemas/diffusion-deadlines.schema.json).

Usage: ``python scripts/row_reference.py`` (``make docs``) rewrites them; ``--check`` exits 1,
naming the stale file, when one differs from what the declaration gives.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from cli_reference import between_markers

from energy_index.documents.editorial import diffusion_tasks, editorial_text
from energy_index.steps.diffusion import Output, output_of
from energy_index.steps.diffusion import row_schema as output_row_schema
from energy_index.steps.row_fields import field_table, row_schema

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "schemas" / "index.schema.json"
DIFFUSION_SCHEMA = REPO / "schemas" / "diffusion-index.schema.json"
SWEEP_SCHEMA = REPO / "schemas" / "deadlines.schema.json"
DIFFUSION_SWEEP_SCHEMA = REPO / "schemas" / "diffusion-deadlines.schema.json"
ROW_PROPERTIES = "index.schema.json#/$defs/rowFields/properties"
DESIGN = REPO / "docs" / "design.md"
START = "<!-- row-fields: generated from steps/row_fields.py by `make docs`; do not edit -->"
END = "<!-- /row-fields -->"


def with_row_schema(text: str) -> str:
    schema = json.loads(text)
    schema["$defs"]["rowFields"] = row_schema()
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _outputs() -> list[Output]:
    """The diffusion tasks' outputs (image, video), as editorial.json declares them."""
    editorial = editorial_text()
    tasks = editorial["diffusion"]["tasks"]
    return [output_of(task, tasks[task]) for task in diffusion_tasks(editorial)]


def with_output_rows(text: str) -> str:
    """The diffusion index's rows ($defs/imageRow, $defs/videoRow), from steps/diffusion.py."""
    schema = json.loads(text)
    for output in _outputs():
        schema["$defs"][f"{output.noun}Row"] = output_row_schema(output)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def series_of(row: dict[str, Any], ref: str) -> dict[str, Any]:
    """A row of ``row``'s schema by field, as a deadline sweep writes it: each field a list over
    the deadlines of the field's values (``ref``: where the row's properties are) or null."""
    return {
        "description": "A row by field over the sweep's deadlines: each field a list of its "
        "values, null at a deadline without a row (generated from the row's schema by "
        "`make docs`).",
        "type": "object",
        "additionalProperties": False,
        "required": row["required"],
        "properties": {
            name: {
                "type": "array",
                "minItems": 1,
                "items": {"anyOf": [{"$ref": f"{ref}/{name}"}, {"type": "null"}]},
            }
            for name in row["properties"]
        },
    }


def with_row_series(text: str) -> str:
    """The token sweep's rows by field ($defs/rowSeries), from steps/row_fields.py."""
    schema = json.loads(text)
    schema.setdefault("$defs", {})["rowSeries"] = series_of(row_schema(), ROW_PROPERTIES)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def with_output_row_series(text: str) -> str:
    """The diffusion sweep's rows by field ($defs/imageRowSeries, $defs/videoRowSeries)."""
    schema = json.loads(text)
    for output in _outputs():
        name = f"{output.noun}Row"
        schema["$defs"][f"{name}Series"] = series_of(
            output_row_schema(output), f"diffusion-index.schema.json#/$defs/{name}/properties"
        )
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def with_field_table(text: str) -> str:
    table = f"{field_table()}\n"
    return between_markers(text, table, start=START, end=END, name="docs/design.md")


GENERATED = (
    (SCHEMA, with_row_schema),
    (DESIGN, with_field_table),
    (DIFFUSION_SCHEMA, with_output_rows),
    (SWEEP_SCHEMA, with_row_series),
    (DIFFUSION_SWEEP_SCHEMA, with_output_row_series),
)

if __name__ == "__main__":
    stale = []
    for path, regenerated in GENERATED:
        current = path.read_text("utf-8")
        wanted = regenerated(current)
        if wanted != current:
            stale.append(path.relative_to(REPO))
            if "--check" not in sys.argv[1:]:
                path.write_text(wanted, "utf-8")
    if stale and "--check" in sys.argv[1:]:
        print(f"stale: {', '.join(map(str, stale))}: run `make docs`")
        sys.exit(1)
