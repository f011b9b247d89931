"""What changed between two builds of an index: the changelog a regeneration prints and keeps.

Rows are matched by (model_id, gpu), the index's own key, so a new pick for a model and GPU is
one changed row (its row_id among the changed fields), not a removal and an addition.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from energy_index.documents.compare import Difference, differences, header_differences
from energy_index.documents.editorial import editorial_text
from energy_index.documents.markdown import inert
from energy_index.steps.diffusion import ENERGY, output_of, row_fields

# The row fields whose change the changelog states as a relative change too: the energy figures
# of either kind of index (a diffusion row's, as steps/diffusion.py declares them: every field
# read from the energy per output).
ENERGY_FIELDS = (
    "wh_per_million_output_tokens",
    "joules_per_output_token",
    *sorted(
        {
            field.name
            for task, entry in editorial_text()["diffusion"]["tasks"].items()
            for field in row_fields(output_of(task, entry))
            if field.source == ENERGY
        }
    ),
)


@dataclass(frozen=True)
class RowChange:
    row_id: str
    changes: list[Difference]


@dataclass(frozen=True)
class Changelog:
    date: str
    commit: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[RowChange] = field(default_factory=list)
    header: list[Difference] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # why the index replaced was unusable
    # Upstream files of the vendored snapshot that changed, appeared or went, as sentences: the
    # snapshot is replaced even when the index is not.
    snapshot: list[str] = field(default_factory=list)

    @property
    def rows_changed(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        """The changes, one a line, as a terminal shows them."""
        return self._lines(str)

    def markdown(self) -> str:
        """The entry of CHANGELOG.md: every upstream word in it (a row_id, a value, a path in a
        sentence) made inert, so that GitHub renders none of it."""
        entries = "".join(f"- {line}\n" for line in self._lines(inert))
        return f"## {self.date}: upstream {self.commit}\n\n{entries}\n"

    def _lines(self, show: Callable[[str], str]) -> list[str]:
        lines = [f"rewrote a damaged index: {show(problem)}" for problem in self.damaged[:5]]
        if len(self.damaged) > 5:
            lines.append(f"… and {len(self.damaged) - 5} more problem(s) of the damaged index")
        lines += [f"added {show(row_id)}" for row_id in self.added]
        lines += [f"removed {show(row_id)}" for row_id in self.removed]
        for row in self.changed:
            lines += [f"changed {show(row.row_id)}: {_change(d, show)}" for d in row.changes]
        lines += [f"header {_header(d, show)}" for d in self.header]
        lines += [f"snapshot: {show(line)}" for line in self.snapshot]
        return lines

    def as_json(self) -> dict[str, Any]:
        return {
            "date": self.date,
            "upstream_commit": self.commit,
            "rows_added": self.added,
            "rows_removed": self.removed,
            "rows_changed": [
                {
                    "row_id": row.row_id,
                    "changes": [
                        {
                            "field": d.where.split(".", 1)[1],
                            "old": d.published,
                            "new": d.rebuilt,
                            "relative_change": _relative(d),
                        }
                        for d in row.changes
                    ],
                }
                for row in self.changed
            ],
            "header_changed": [vars(d) for d in self.header],
            "damaged": self.damaged,
            "snapshot_changed": self.snapshot,
        }


ENTRY_MARK = "<!-- energy-index entry: {key} -->\n"


def history_with(history: str, entry: str, *, key: str) -> str:
    """``CHANGELOG.md`` with ``entry`` appended, or in place of the entry with the same key.

    Example: ``history_with(text, log.markdown(), key="index.json upstream abc replacing none")``
    run twice gives one entry.
    """
    mark = ENTRY_MARK.format(key=key)
    start = history.find(mark)
    if start < 0:
        return history + mark + entry
    following = history.find("<!-- energy-index entry: ", start + len(mark))
    end = len(history) if following < 0 else following
    return history[:start] + mark + entry + history[end:]


def changelog(
    previous: dict[str, Any] | None, current: dict[str, Any], *, date: str, commit: str
) -> Changelog:
    """Rows added, removed and changed (field by field), and header keys that changed."""
    old = _rows_by_key(previous or {})
    new = _rows_by_key(current)
    changed = []
    for key in sorted(old.keys() & new.keys()):
        row_id = new[key]["row_id"]
        found = differences(old[key], new[key], prefix=row_id)
        if found:
            changed.append(RowChange(row_id=row_id, changes=found))
    return Changelog(
        date=date,
        commit=commit,
        added=sorted(new[k]["row_id"] for k in new.keys() - old.keys()),
        removed=sorted(old[k]["row_id"] for k in old.keys() - new.keys()),
        changed=changed,
        header=header_differences(previous, current) if previous else [],
    )


def snapshot_changes(
    old: dict[str, str] | None, new: dict[str, str], *, read: tuple[str, ...]
) -> list[str]:
    """What changed between two snapshots' files (path → sha256), one sentence per file, saying
    whether the index reads it.

    Example: ``snapshot_changes({"a.json": "1"}, {"a.json": "2"}, read=())`` →
    ``["a.json changed (the index does not read it)"]``.
    """
    if old is None:
        return ["vendored for the first time"]

    def said(path: str, what: str) -> str:
        return f"{path} {what}" + ("" if path in read else " (the index does not read it)")

    lines = [said(p, "added upstream") for p in sorted(new.keys() - old.keys())]
    lines += [said(p, "deleted upstream, dropped") for p in sorted(old.keys() - new.keys())]
    lines += [said(p, "changed") for p in sorted(old.keys() & new.keys()) if old[p] != new[p]]
    return lines


def _rows_by_key(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["model_id"], row["gpu"]): row for row in document.get("rows", [])}


def _relative(difference: Difference) -> float | None:
    field_name = difference.where.rsplit(".", 1)[-1]
    old, new = difference.published, difference.rebuilt
    if field_name not in ENERGY_FIELDS or not old or not isinstance(new, int | float):
        return None
    return float(round((new - old) / old, 6))


def _change(difference: Difference, show: Callable[[str], str] = str) -> str:
    field_name = difference.where.rsplit(".", 1)[-1]
    old, new = (_value(v, show) for v in (difference.published, difference.rebuilt))
    text = f"{field_name}: {old} → {new}"
    relative = _relative(difference)
    return f"{text} ({relative:+.1%})" if relative is not None else text


def _header(difference: Difference, show: Callable[[str], str]) -> str:
    if show is str:
        return str(difference)
    old, new = (_value(v, show) for v in (difference.published, difference.rebuilt))
    return f"{difference.where}: {old} → {new}"


def _value(value: Any, show: Callable[[str], str]) -> str:
    """A value as JSON; text and anything holding text (upstream's words) through ``show``."""
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return show(json.dumps(value, ensure_ascii=show is str))
