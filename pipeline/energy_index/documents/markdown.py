"""Upstream's words in committed Markdown, made inert: the one function every Markdown writer
(the index's changelog entry, the carbon changelog entry, both in CHANGELOG.md) passes an
upstream string through.

CHANGELOG.md is committed by the weekly pull request and rendered by GitHub, so a name from
upstream written there raw is live: ``<img src=…>`` is HTML, ``[x](https://…)`` a link,
``@someone`` a mention, ``closes #1`` a reference, a line separator starts a new block. Each
such string goes into a code span, where Markdown renders nothing (no HTML, link, emphasis,
mention or reference), with every character that could end the line or the block, or hide,
written as its ``\\uXXXX`` escape. The text stays readable as it is, and the same string gives
the same bytes.
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
    shown = "".join(
        _escaped(c) if unicodedata.category(c) in _ESCAPED_CATEGORIES else c for c in text
    )
    if not shown.strip():
        shown = repr(shown)  # nothing but spaces, or nothing: a code span would show neither
    fence = "`" * (1 + max((len(run) for run in _BACKTICKS.findall(shown)), default=0))
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _escaped(character: str) -> str:
    code = ord(character)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
