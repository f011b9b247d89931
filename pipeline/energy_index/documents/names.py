"""The names document (``energy-index names``, ``energy_index.names()``) and its table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KIND = "names"


def names_document(
    tasks: Mapping[str, Mapping[str, Any]], *, source: Mapping[str, Any] | None, location: str
) -> dict[str, Any]:
    """Per task (in the order given) its models and GPU types (``steps.names.names_of``), with
    the snapshot they were read from (``location``, and its repository and commit)."""
    origin = {"location": location}
    if source is not None:
        origin |= {"repository": source["repository"], "commit": source["commit"]}
    return {
        "kind": KIND,
        "source": origin,
        "tasks": [{"task": task, **names} for task, names in tasks.items()],
    }


def names_lines(document: Mapping[str, Any]) -> list[str]:
    """The document as the command prints it: the snapshot, then per task a line and one row per
    model (nickname, model id, slug, GPU types), in aligned columns."""
    source = document["source"]
    commit = f" at {source['commit'][:12]}" if "commit" in source else ""
    repository = source.get("repository", "")
    lines = [f"names of {source['location']} ({repository}{commit}): {len(document['tasks'])} "
             "task(s); plan --model takes a nickname, model id or slug, any case"]  # fmt: skip
    for task in document["tasks"]:
        models = task["models"]
        lines.append("")
        lines.append(
            f"{task['task']}: {len(models)} model(s) on {len(task['gpus'])} GPU type(s) "
            f"({', '.join(task['gpus'])})"
        )
        rows = [("nickname", "model id", "slug", "GPU types")] + [
            (m["model"], m["model_id"], m["slug"], ", ".join(m["gpus"])) for m in models
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines.extend(
            "  " + "  ".join(v.ljust(w) for v, w in zip(row[:3], widths, strict=True)) + "  "
            + row[3]
            for row in rows
        )  # fmt: skip
    return lines
