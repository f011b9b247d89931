"""Objects of one shape written by field: the keys once, each value a list (plan.json's plans per
pair, profiles.json's picks and GPU ratios per pair, a deadline sweep's cells per group), and
the objects read back from them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


def by_field(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Objects of one shape as one object of that shape whose values are lists, the items'
    values in order (the planner's curve points are written so too): the keys once, not once per
    item (the keys of a pair's 13 plans were 34 of plan.json's 57 MB at 10⁵ configurations).
    ValueError for no items, or items of different shapes (keys, their order, or an object
    where another item has none)."""
    if not items:
        raise ValueError("by_field: no items")
    keys = list(items[0]) if isinstance(items[0], dict) else []
    for item in items:
        if not isinstance(item, dict) or list(item) != keys:
            raise ValueError(f"by_field: items of different shapes: {items[0]!r}, {item!r}")
    fields = {}
    for key in keys:
        values = [item[key] for item in items]
        # The kinds of a field's values, found in C: an isinstance per value was a second of a
        # 10⁵-configuration site's cpu.
        nested = any(issubclass(kind, dict) for kind in set(map(type, values)))
        fields[key] = by_field(values) if nested else values
    return fields


def series(records: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """Flat records grouped by their values of ``keys``: one object per group, in the order the
    groups first appear, holding those values and the rest of its records by field, in order."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(tuple(record[key] for key in keys), []).append(record)
    return [
        {
            **dict(zip(keys, group, strict=True)),
            **by_field([{k: v for k, v in record.items() if k not in keys} for record in members]),
        }
        for group, members in groups.items()
    ]


def records_of(group: dict[str, Any], keys: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The flat records of one object ``series`` made: its ``keys`` and the n-th value of each
    list, in order. ValueError if its lists differ in length."""
    lists = {key: value for key, value in group.items() if key not in keys}
    lengths = {len(value) for value in lists.values()}
    if len(lengths) != 1:
        raise ValueError(f"records_of: lists of different lengths: {sorted(lengths)}")
    head = {key: group[key] for key in keys}
    for position in range(lengths.pop()):
        yield {**head, **{key: value[position] for key, value in lists.items()}}


def cells_by_field(
    cells: Sequence[dict[str, Any]], *, fields: Sequence[str], holding: str = "row"
) -> dict[str, Any]:
    """A deadline sweep's cells of one group (one per deadline, each holding a row of
    ``fields`` or None under ``holding``) by field: a list per key over the deadlines, and the
    rows as one object of ``fields``, a list each, null at a deadline without a row.
    ValueError for a row of other fields."""
    rows = []
    for cell in cells:
        row = cell[holding]
        if row is not None and list(row) != list(fields):
            raise ValueError(f"cells_by_field: a row of fields {list(row)}, not {list(fields)}")
        rows.append(row)
    return {
        **{
            key: [cell[key] for cell in cells]
            for key in (cells[0] if cells else {})
            if key != holding
        },
        holding: {field: [None if row is None else row[field] for row in rows] for field in fields},
    }
