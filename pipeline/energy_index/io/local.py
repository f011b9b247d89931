"""Reading local inputs: regular files only, under a size cap, JSON parsed without tracebacks.

A path given on the command line or listed in a snapshot may name a device (``/dev/zero``
never ends), a FIFO (opening it waits for a writer), a directory, or something far larger than
any index; each is refused by name before its content is read.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from energy_index.errors import SourceError, shown
from energy_index.model import NotUtf8, RefusedJSON, strict_json

# The largest local input read: above the 870 MB task file of 10⁶ configurations that the
# benchmarks build, far below what would exhaust memory on a build machine.
MAX_LOCAL_BYTES = 2 << 30
EXCERPT_CHARACTERS = 24  # of a file that is not JSON, quoted escaped, never more

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(path: Path) -> str | None:
    """What ``path`` is if something other than a regular file or a directory is there (a FIFO,
    a link to a device); None if nothing, a file or a directory is.

    Example: ``special_kind(Path("/dev/zero"))`` → ``"a character device"``.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # not ours to judge here: reading or writing it says what is wrong
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else _kind(mode)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def local_bytes(path: Path, *, max_bytes: int = MAX_LOCAL_BYTES) -> bytes:
    """The bytes of a regular file, refused if it is anything else or larger than ``max_bytes``."""
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise SourceError(f"{shown(path, path=True)}: cannot be read ({error.strerror})") from None
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)  # before fdopen, which refuses a directory naming only its number
        raise SourceError(f"{shown(path, path=True)}: not a regular file ({_kind(status.st_mode)})")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            content = b""
            if status.st_size <= max_bytes:
                # Its size and a byte more, then the rest only if it grew: a read of
                # max_bytes + 1 at once sized its buffer by that (2 GiB), which cost 0.3 s of
                # system cpu over the 11,009 files of a 10⁵-configuration site.
                content = handle.read(status.st_size + 1)
                if len(content) > status.st_size:
                    content += handle.read(max_bytes + 1 - len(content))
        except OSError as error:
            raise SourceError(
                f"{shown(path, path=True)}: cannot be read ({error.strerror})"
            ) from None
    if status.st_size > max_bytes or len(content) > max_bytes:
        size = max(status.st_size, len(content))
        raise SourceError(
            f"{shown(path, path=True)}: {size} bytes, more than the {max_bytes} a local input may "
            "have"
        )
    return content


def json_value(content: bytes, *, path: Path | str) -> Any:
    """Parsed JSON; bad JSON, a key repeated in one object, an integer beyond a float and
    nesting too deep to parse are errors naming the file."""
    try:
        return strict_json(content)
    except RefusedJSON as error:
        raise SourceError(f"{shown(path, path=True)}: not valid here: {error}") from None
    except RecursionError:
        raise SourceError(
            f"{shown(path, path=True)}: not valid JSON (nested too deeply to parse)"
        ) from None
    except ValueError as error:
        raise SourceError(
            f"{shown(path, path=True)}: not valid JSON ({_reason(error)}); starts "
            f"{excerpt(content)}"
        ) from None


def excerpt(content: bytes) -> str:
    """The first few characters of a file, escaped: enough to recognise it, not to leak it."""
    text = content[:EXCERPT_CHARACTERS].decode("utf-8", "replace")
    more = "…" if len(content) > EXCERPT_CHARACTERS else ""
    return ascii(text) + more


def _reason(error: ValueError) -> str:
    # A JSONDecodeError quotes no content, only where parsing stopped; nor does NotUtf8. An
    # integer past Python's cap on digits is refused before (NumberTooLarge): nothing else is.
    if isinstance(error, json.JSONDecodeError | NotUtf8):
        return str(error)
    return type(error).__name__
