"""The regeneration pull request's text, from the output of `make regenerate`.

Everything in that output may carry upstream's words (model names, field values), so nothing of
it is rendered as Markdown: it goes into one fenced block written by the function every Markdown
writer uses (energy_index.documents.markdown: the fence one backtick longer than any run inside,
so that no line can close it; control, format and separator characters, terminal escapes among
them, shown as their \\uXXXX escape). Inside a code block GitHub renders no HTML, link, mention
or reference. Here only the size is decided: each line cut to MAX_LINE characters, the first
MAX_LINES lines shown, MAX_SHOWN characters at most.

Usage: .venv/bin/python scripts/pr_body.py regenerate.log > pr-body.md
"""

from __future__ import annotations

import sys
from pathlib import Path

from energy_index.documents.markdown import inert_block, visible

MAX_LINE = 300  # characters per line of the log, as shown (escapes counted)
MAX_LINES = 400  # lines of the log; the rest is counted, not shown
# Characters of the log shown, its line breaks counted: GitHub takes a body of at most 65,536
# and create-pull-request cuts a longer one, which would lose the block's closing fence and the
# paragraph the workflow appends after the block. 400 lines of 300 were 121,000.
MAX_SHOWN = 60_000
HEADER = (
    "Weekly regeneration from upstream (ml-energy/leaderboard). The vendored snapshot, the index, "
    "its build report and the changelogs change together; the regenerate job ran `make check`, "
    "`make test` and `make site` on this tree before opening it.\n\n"
    "The output of `make regenerate`, as text:\n\n"
)


def shown_line(line: str) -> str:
    """One log line as it is shown: escaped first, so that the cut counts what is shown."""
    kept = visible(line)
    if len(kept) > MAX_LINE:
        kept = kept[: MAX_LINE - 1] + "…"
    return kept


def body(log: str) -> str:
    # Split at newlines only: str.splitlines also splits at U+2028 and other separators, which
    # the block shows as their escapes instead.
    lines = log.removesuffix("\n").split("\n")
    shown: list[str] = []
    size = 0
    for line in lines[:MAX_LINES]:
        kept = shown_line(line)
        size += len(kept) + 1
        if size > MAX_SHOWN:
            break
        shown.append(kept)
    if len(lines) > len(shown):
        shown.append(f"… and {len(lines) - len(shown)} more line(s), in the changelog")
    return HEADER + inert_block("\n".join(shown))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    log = Path(argv[1]).read_bytes().decode("utf-8", errors="replace")
    sys.stdout.write(body(log))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
