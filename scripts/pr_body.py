"""The regeneration pull request's text, from the output of `make regenerate`.

Everything in that output may carry upstream's words (model names, field values), so nothing of
it is rendered as Markdown: it goes into one fenced block (backticks replaced, so the fence cannot
be closed from inside), each line cut to a sane length, with `@` and `#` kept from mentioning or
linking, and control characters (terminal escapes among them) dropped.

Usage: python3 scripts/pr_body.py regenerate.log > pr-body.md
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

MAX_LINE = 300  # characters per line of the log
MAX_LINES = 400  # lines of the log; the rest is counted, not shown
ZERO_WIDTH_SPACE = "\u200b"
HEADER = (
    "Weekly regeneration from upstream (ml-energy/leaderboard). The vendored snapshot, the index, "
    "its build report and the changelogs change together; the regenerate job ran `make check`, "
    "`make test` and `make site` on this tree before opening it.\n\n"
    "The output of `make regenerate`, as text:\n\n"
)


def neutral_line(line: str) -> str:
    """One log line made inert: no control or format character, no backtick, no mention or
    reference, cut to MAX_LINE characters."""
    kept = "".join(
        ch
        for ch in line
        if ch == "\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn")
    )
    kept = kept.replace("`", "'")
    # Inside a code block GitHub links neither, but a reader copying the text out should not be
    # led to mention or link either.
    kept = kept.replace("@", "@" + ZERO_WIDTH_SPACE).replace("#", "#" + ZERO_WIDTH_SPACE)
    if len(kept) > MAX_LINE:
        kept = kept[: MAX_LINE - 1] + "…"
    return kept


def body(log: str) -> str:
    lines = log.splitlines()
    shown = [neutral_line(line) for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        shown.append(f"… and {len(lines) - MAX_LINES} more line(s), in the changelog")
    return HEADER + "```text\n" + "\n".join(shown) + "\n```\n"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    log = Path(argv[1]).read_bytes().decode("utf-8", errors="replace")
    sys.stdout.write(body(log))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
