"""Upstream's words in Markdown, made inert: the one code path every Markdown writer (the
index's changelog entry, the carbon changelog entry, both in CHANGELOG.md; the weekly pull
request's text, scripts/pr_body.py) passes an upstream string through.

CHANGELOG.md is committed by the weekly pull request and rendered by GitHub, so a name from
upstream written there raw is live: ``<img src=…>`` is HTML, ``[x](https://…)`` a link,
``@someone`` a mention, ``closes #1`` a reference, a line separator starts a new block. Each
such string goes into a code span, where Markdown renders nothing (no HTML, link, emphasis,
mention or reference), with every character that could end the line or the block, or hide,
written as its ``\\uXXXX`` escape. The text stays readable as it is, and the same string gives
the same bytes.

A log of many lines (the pull request's text) is one fenced block instead (``inert_block``):
code spans, one per line, would join the lines into one paragraph and lose its columns. The same
escaping and the same fence rule (one backtick longer than any run inside) make it inert.
"""

from __future__ import annotations

import re
import unicodedata

# Written escaped, not raw: control (Cc: newlines, escapes), format (Cf: bidirectional and
# zero-width), line and paragraph separators, surrogates, private-use and unassigned characters:
# the categories a name is refused for (steps/derive.py), here for any text given.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
_BACKTICKS = re.compile(r"`+")


def inert(text: str) -> str:
    """``text`` as a Markdown code span that renders exactly as the text: the fence one backtick
    longer than any run inside, padded with a space when the text starts or ends with a backtick
    or a space (CommonMark strips one from each side), every escaped character as ``\\uXXXX``.

    Example: ``inert("France")`` → ``"`France`"``; ``inert("a`b")`` → ``"``a`b``"``;
    ``inert("x\\u2028@y")`` → ``"`x\\\\u2028@y`"``.
    """
    shown = visible(text)
    if not shown.strip():
        shown = repr(shown)  # nothing but spaces, or nothing: a code span would show neither
    fence = _fence(shown, shortest=1)
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def inert_block(text: str, *, info: str = "text") -> str:
    """``text``, lines kept, as a fenced code block that renders exactly as the text: every
    line's escaped characters as ``\\uXXXX`` (the line breaks between lines kept), the fence at
    least three backticks and one longer than any run inside, so that no line can close it.

    Example: ``inert_block("a\\nb")`` → ``"```text\\na\\nb\\n```\\n"``.
    """
    shown = "\n".join(visible(line) for line in text.split("\n"))
    fence = _fence(shown, shortest=3)
    return f"{fence}{info}\n{shown}\n{fence}\n"


def visible(text: str) -> str:
    """``text`` with every character that could end a line or a block, or hide (control,
    format, separator, private-use, unassigned), as its ``\\uXXXX`` escape: printable, and the
    same when given again.

    Example: ``visible("a\\u202eb")`` → ``"a\\\\u202eb"``.
    """
    return "".join(
        _escaped(c) if unicodedata.category(c) in _ESCAPED_CATEGORIES else c for c in text
    )


def _fence(shown: str, *, shortest: int) -> str:
    return "`" * max(shortest, 1 + max((len(r) for r in _BACKTICKS.findall(shown)), default=0))


def _escaped(character: str) -> str:
    code = ord(character)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
