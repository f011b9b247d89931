"""What each output of this tool looks like at its ends, to tell it from a file of someone else's
that lies where the output would go: build, regenerate and report replace only their own outputs
(unless told ``force``), as site replaces only a folder its files.json lists.

Told from the first and last few KiB (``settings.RECOGNISED_BYTES``), never by reading a whole
file: each JSON document opens with its marker (``serialized`` keeps the keys in the order
built), a table with its leading columns, a page with its generator tag, a picture with its
Software text chunk, CHANGELOG.md with its title. A damaged index is still this tool's when its
build report beside it is: regenerate rewrites a damaged index, and build replaces it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from energy_index.documents.index import DIFFUSION_KIND, DIFFUSION_REPORT_TITLE, REPORT_TITLE
from energy_index.model import EXTRAS
from energy_index.settings import TABLE_FORMATS

# The first line of CHANGELOG.md, the history of every index in a folder (documents/changelog.py
# writes the rest): also how such a file is told as this tool's.
HISTORY_TITLE = "# Changes to the index\n\n"

# The tag in the head of every report page (pages/assets/page.html), what report looks for.
PAGE_GENERATOR = b'<meta name="generator" content="energy-index">'
# The text chunk (keyword and text) that report puts right after a charts picture's header
# (pages/picture.py): PNG's registered "Software" keyword.
PICTURE_SOFTWARE = (b"Software", b"energy-index")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# How a page written before the generator tag (energy-index 1.0.0 and earlier) ends: its scripts'
# last lines. Without it, every user's output/report.html needed --force after an upgrade.
_EARLIER_PAGE_ENDS = (b'document.documentElement.dataset.impactsReady = "true";', b"start();")
_PAGE_START = b'<!DOCTYPE html>\n<html lang="en" class="no-js">'


def _page(ends: Ends) -> bool:
    return PAGE_GENERATOR in ends.head or (
        ends.head.startswith(_PAGE_START)
        and ends.tail.rstrip().endswith(b"</script>\n</body>\n</html>")
        and any(end in ends.tail[-400:] for end in _EARLIER_PAGE_ENDS)
    )


@dataclass(frozen=True)
class Ends:
    """The first and the last bytes of a file found at an output path (the same bytes when the
    file is short); ``readable`` False when it could not be read."""

    head: bytes
    tail: bytes
    readable: bool = True


def _json(*keys: tuple[str, str | None]) -> Callable[[Ends], bool]:
    """A JSON object whose first keys are ``keys``, in order, each with that string value (None:
    any string; ``#``: any number)."""
    parts = []
    for key, value in keys:
        if value is None:
            text = rb'"(?:[^"\\]|\\.)*"'
        elif value == "#":
            text = rb"-?\d"
        else:
            text = re.escape(f'"{value}"'.encode())
        parts.append(re.escape(f'"{key}"'.encode()) + rb"\s*:\s*" + text)
    pattern = re.compile(rb"\A\s*\{\s*" + rb"\s*,\s*".join(parts))
    return lambda ends: pattern.match(ends.head) is not None


def _csv(columns: tuple[str, ...]) -> Callable[[Ends], bool]:
    pattern = re.compile(re.escape(",".join(columns).encode()) + rb"[,\r\n]")
    return lambda ends: pattern.match(ends.head) is not None


def _parquet(columns: tuple[str, ...]) -> Callable[[Ends], bool]:
    """Parquet's magic at both ends, and the columns named in its footer (the file's end)."""
    return lambda ends: (
        ends.head.startswith(b"PAR1")
        and ends.tail.endswith(b"PAR1")
        and all(name.encode() in ends.tail for name in columns)
    )


_TOKEN_INDEX = _json(("version", None), ("updated", None))  # the index or the extended index
_DIFFUSION_INDEX = _json(("version", None), ("kind", DIFFUSION_KIND))


def _INDEX(ends: Ends) -> bool:
    """An index of either kind: a token index (or its extended copy) or a diffusion index."""
    return _TOKEN_INDEX(ends) or _DIFFUSION_INDEX(ends)


_REPORTS = (_json(("report", REPORT_TITLE)), _json(("report", DIFFUSION_REPORT_TITLE)))


def _build_report(ends: Ends) -> bool:
    """A build report of either kind, by its title."""
    return any(report(ends) for report in _REPORTS)


_TABLES = {"csv": _csv, "parquet": _parquet}


def _extras() -> Iterator[tuple[str, Callable[[Ends], bool]]]:
    """How each file of each extra (``model.EXTRAS``) is told: a document by its kind (an index
    by its version), a table by its leading columns; beside a diffusion index, by its own
    (``Extra.for_diffusion``), at the same path."""
    for extra in EXTRAS.values():
        forms = [extra, *filter(None, [extra.for_diffusion()])]
        if extra.name:
            yield (
                extra.role,
                _either(
                    *(
                        _json(("version", None), ("kind", form.kind)) if form.kind else _INDEX
                        for form in forms
                    )
                ),
            )
        for format, (role, _) in extra.tables(Path("index.json"), TABLE_FORMATS).items():
            yield role, _either(*(_TABLES[format](form.columns) for form in forms if form.columns))


def _either(*recognisers: Callable[[Ends], bool]) -> Callable[[Ends], bool]:
    return lambda ends: any(told(ends) for told in recognisers)


# Each output, by the role its path is given under (flows/outputs.py ``output_paths``,
# flows/regenerate.py ``regeneration_paths``, flows/report.py), and how it is told.
RECOGNISERS: dict[str, Callable[[Ends], bool]] = {
    "index": _INDEX,
    "build report": _build_report,
    "errors file": _json(("file", None), ("failures", "#")),
    "changelog": _json(("date", None), ("upstream_commit", None)),
    "carbon changelog": _json(("kind", "carbon-changelog")),
    "history": lambda ends: ends.head.startswith(HISTORY_TITLE.rstrip().encode()),
    "report page": _page,
    "charts picture": lambda ends: (
        ends.head.startswith(PNG_SIGNATURE) and b"tEXt" + b"\0".join(PICTURE_SOFTWARE) in ends.head
    ),
    **dict(_extras()),
}
# The index's own tables (build --format) of either kind: a diffusion index's rows have their
# own leading columns.
DIFFUSION_TABLE_COLUMNS = ("model", "slug", "model_id", "params_b", "precision", "gpu")


for _format, (_role, _) in EXTRAS["formats"].tables(Path("index.json"), TABLE_FORMATS).items():
    RECOGNISERS[_role] = _either(RECOGNISERS[_role], _TABLES[_format](DIFFUSION_TABLE_COLUMNS))


def foreign_outputs(found: Mapping[str, Ends], *, index_suffix: str = ".json") -> list[str]:
    """The roles, of those whose file exists (``found``), whose file this tool did not write.

    The index is this tool's when it looks like one, or when the build report beside it does
    (a damaged index, which regenerate rewrites, starts with anything) and the index's name
    ends in ``.json``: ``index.md`` and ``index.csv`` share ``index.report.json`` with
    ``index.json``, and a user's notes at ``--out index.md`` are not what that report vouches for.

    Example: ``foreign_outputs({"index": Ends(b'{"mine": true}', b'{"mine": true}')})`` is
    ``["index"]``.
    """
    ours = {role for role, ends in found.items() if ends.readable and RECOGNISERS[role](ends)}
    vouched = index_suffix == ".json" and found.get("index", Ends(b"", b"")).readable
    if "build report" in ours and vouched:
        ours.add("index")
    return [role for role in found if role not in ours]
