"""Where the time goes in one build, stage by stage, and how fast other JSON parsers read the
same file. Run by bench/run.py on the largest size; each parser in its own process.

Example: python bench/stages.py bench/.data/snapshot-1000000-seed1
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

PARSERS = {
    "json.loads (the reference's)": "import json; json.loads(data)",
    "orjson.loads": "import orjson; orjson.loads(data)",
    "polars.read_json": (
        "import io, polars; polars.read_json(io.BytesIO(data), infer_schema_length=None)"
    ),
    "msgspec, untyped": "import msgspec; msgspec.json.decode(data)",
    "msgspec, each configuration's bounds only": (
        "import msgspec; msgspec.json.decode(data, type=dict[str, list[msgspec.Raw] | str])"
    ),
    "msgspec bounds, typed structs in chunks made columns (the pipeline's, with the frame)": (
        "from energy_index.model import UpstreamFile; "
        "from energy_index.steps.validate import _quick_parse; "
        "assert _quick_parse(UpstreamFile('t', data, '', len(data), '', '', '')) is not None"
    ),
}


def stage_seconds(snapshot: Path) -> list[tuple[str, float]]:
    from energy_index.documents.editorial import editorial_text, task_text
    from energy_index.documents.index import index_document, serialized
    from energy_index.documents.invariants import index_problems
    from energy_index.io.snapshots import upstream_snapshot
    from energy_index.model import Dates
    from energy_index.steps import validate
    from energy_index.steps.derive import index_rows
    from energy_index.steps.selection import selected_configurations
    from energy_index.steps.stability import stable_configurations

    marks: list[tuple[str, float]] = []

    def timed(name: str, work):  # type: ignore[no-untyped-def]
        start = time.process_time()  # cpu: the machine is shared, wall time says little
        result = work()
        marks.append((name, time.process_time() - start))
        return result

    snapshot_files = timed(
        "fetch: read and sha256", lambda: upstream_snapshot(snapshot, task="lm-arena-chat")
    )
    parsed = timed(
        "validate: JSON decode into typed columns",
        lambda: validate._quick_parse(snapshot_files.task_file),
    )
    timed(
        "validate: every rule, one polars query (pandera only on a failure)",
        lambda: validate.every_rule_holds(
            {**validate.SCHEMA, **validate.REPORTED_RULES}, parsed.frame
        ),
    )
    stable = timed("stability filter", lambda: stable_configurations(parsed.frame)).stable
    selection = timed("selection", lambda: selected_configurations(stable))
    editorial = editorial_text()
    rows = timed(
        "derive",
        lambda: index_rows(selection.selected, precision_labels=editorial["precision_labels"]),
    )
    stability = stable_configurations(parsed.frame)
    document = index_document(
        rows=rows,
        snapshot=snapshot_files,
        compiled="2026-02-16",
        stability=stability,
        selection=selection,
        dates=Dates("2026-11-30", "2026-11-30", "2026-11-30"),
        editorial=editorial,
        task_text=task_text(editorial, "lm-arena-chat"),
    )
    # No robustness figures: the build computes them only for --extended since issue 36 item 4.
    timed("emit: JSON Schema check and rules of the index", lambda: index_problems(document))
    timed("emit: serialize the index", lambda: serialized(document))
    return marks


def parser_seconds(task_file: Path) -> list[tuple[str, str]]:
    results = []
    for name, code in PARSERS.items():
        program = (
            f"import time, resource; data = open({str(task_file)!r}, 'rb').read(); "
            f"start = time.perf_counter(); {code}; "
            "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        )
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
        if run.returncode:
            results.append(
                (name, "not available" if "ModuleNotFoundError" in run.stderr else "failed")
            )
            continue
        seconds, kilobytes = run.stdout.split()
        results.append((name, f"{float(seconds):.2f} s, peak RSS {int(kilobytes) / 1024:,.0f} MiB"))
    return results


if __name__ == "__main__":
    snapshot = Path(sys.argv[1])
    print(
        json.dumps(
            {
                "stages": stage_seconds(snapshot),
                "parsers": parser_seconds(snapshot / "public/data/tasks/lm-arena-chat.json"),
            }
        )
    )
