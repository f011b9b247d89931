"""Files written so that nothing is ever half-written, and output paths checked first.

Each file is written to a temporary file in the same folder and renamed over the target, so a
failure at any point leaves the previous file exactly as it was; a directory (a snapshot) is
swapped in whole. A folder being written is locked, and stale temporaries of a killed run are
cleaned on the next.

This is the one place that writes an output or swaps a directory, for the promise "nothing
half-written": tests/test_outputs_under_attack.py (a full disk, two runs at once, links) and
tests/test_faults.py (crashes) hold it. Write through it, not beside it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import glob
import hashlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO

from energy_index.errors import (
    QUOTED_CHARACTERS,
    LockBusy,
    OutputError,
    SourceError,
    UsageError,
    listed,
    shown,
)
from energy_index.io.local import local_bytes, special_kind
from energy_index.io.manifest import Checks, SnapshotManifest, link_on_the_way, read_manifest
from energy_index.model import SNAPSHOT_MANIFEST


def checked_targets(targets: Mapping[str, Path]) -> None:
    """Refuse, before anything is written, output paths that cannot work: one naming no file
    (``""``, ``/``), an existing directory or special file (a FIFO, a link to a device), or one
    path given to two outputs.

    ``targets`` maps what each output is (``"index"``, ``"csv export"``) to its path.
    """
    by_path: dict[Path, list[str]] = {}
    for role, path in targets.items():
        if not path.name or path.name in (".", ".."):
            raise UsageError(
                f"{shown(path, path=True)}: the {role} path names no file (a file name is needed)"
            )
        if path.is_dir():
            raise UsageError(
                f"{shown(path, path=True)}: the {role} path is a directory; name a file in it"
            )
        kind = special_kind(path)
        if kind:  # a FIFO would hang the read of the previous build, /dev/zero never end
            raise UsageError(
                f"{shown(path, path=True)}: the {role} path is {kind}, not a regular file; name one"
            )
        by_path.setdefault(Path(os.path.abspath(path)), []).append(role)
    for path, roles in by_path.items():
        if len(roles) > 1:
            raise UsageError(
                f"{shown(path, path=True)}: used twice, for the {' and the '.join(roles)}",
                parameter="out",
            )


def refuse_links_below(folder: Path, targets: Iterable[Path]) -> None:
    """Refuse (UsageError) a target that ``folder`` reaches through a symbolic link to a folder
    under it: the tool makes those folders (``tasks/<task>/``), and a link there, put by anyone
    who can write in ``folder``, would lead the write outside it. A link at a target itself is
    fine: it is replaced, never written through.
    """
    for target in targets:
        relative = Path(os.path.relpath(target.parent, folder))
        if relative.parts[:1] == ("..",):
            continue  # not under the folder: not this check's
        link = link_on_the_way(folder, relative.as_posix()) if relative.parts else None
        if link is not None:
            raise UsageError(
                f"{link}: a symbolic link where this tool makes a folder for {target.name}; "
                f"refused, nothing written (it would lead the write outside {folder})"
            )


def existing_ends(paths: Mapping[str, Path], *, size: int) -> dict[str, tuple[bytes, bytes] | None]:
    """For each path where a file exists, its first and last ``size`` bytes (None: it could not
    be read), by the same key; never more than ``2 * size`` bytes of a file are read.

    Run after ``checked_targets``, which refuses directories and special files by name.
    """
    ends: dict[str, tuple[bytes, bytes] | None] = {}
    for key, path in paths.items():
        if not os.path.lexists(path):
            continue
        try:
            with open(path, "rb") as handle:
                head = handle.read(size)
                handle.seek(max(os.fstat(handle.fileno()).st_size - size, 0))
                ends[key] = (head, handle.read(size))
        except OSError:
            ends[key] = None  # a link to nowhere, a file not ours to read: not told as ours
    return ends


def write_files(
    contents: Mapping[Path, bytes],
    *,
    directories: Mapping[Path, Mapping[str, bytes]] | None = None,
    manifest: str = SNAPSHOT_MANIFEST,
    keep_edits: bool = False,
) -> None:
    """Write several files so that none is replaced unless all were written in full; with
    ``directories``, also replace each of those directories by one holding exactly its files,
    as ``write_directory`` does (a snapshot this tool wrote, or none).

    Everything is written to temporaries first and only then renamed into place, so that a
    full disk while writing any of them replaces none: putting back what a rename had
    replaced would need the space that is not there. Under the lock of each folder written to
    (see ``folder_lock``), so that temporaries found there under the lock are stale ones of a
    run that died, and are removed. Ctrl-C during the renames waits until they are done. An
    OSError (disk full, read-only filesystem) becomes an ``OutputError`` naming the file.
    """
    trees = {Path(os.path.abspath(target)): files for target, files in (directories or {}).items()}
    for target, files in trees.items():
        _named(target)
        _inside_names(target, files)
    with contextlib.ExitStack() as locks:
        for folder in sorted({target.parent for target in [*contents, *trees]}):
            _made_folder(folder)
            locks.enter_context(folder_lock(folder))
            _remove_stale([target for target in contents if target.parent == folder])
        for target in trees:
            _checked(target, manifest=manifest, keep_edits=keep_edits)
        _staged_and_renamed(contents, trees)


def _staged_and_renamed(
    contents: Mapping[Path, bytes], trees: Mapping[Path, Mapping[str, bytes]]
) -> None:
    """Stage every file and tree beside its target, then rename them all into place with
    interrupts deferred; what is left staged (the old trees; all of it after a failure) goes."""
    staged: list[tuple[str, Path]] = []
    stagings: list[tuple[Path, Path]] = []
    try:
        for target, files in trees.items():
            stagings.append((_staged_tree(target, files), target))
        for target, data in contents.items():
            staged.append((_staged_copy(target, data), target))
        with _interrupts_deferred():
            try:
                for staging, target in stagings:
                    _swapped_in(staging, target)
                for temporary, target in staged:
                    os.replace(temporary, target)
            except OSError as error:
                raise unwritable(target, error) from None
    finally:
        for temporary, _ in staged:
            if os.path.exists(temporary):
                os.unlink(temporary)
        for staging, _ in stagings:
            shutil.rmtree(staging, ignore_errors=True)  # the old tree, or the unused new one


_held = threading.local()


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on a folder (flock on the folder itself: no lock file is left).

    Shared outputs (``CHANGELOG.md``, read, extended and rewritten) are changed under it, so two
    runs writing into one folder never lose each other's update. Re-entrant in a thread; other
    threads and processes wait.
    """
    key = os.path.abspath(folder)
    held: set[str] = getattr(_held, "folders", set())
    if key in held:
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        _held.folders = held | {key}
        try:
            yield
        finally:
            _held.folders = held
    finally:
        os.close(descriptor)  # releases the lock


def _made_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(
            f"{shown(folder, path=True)}: cannot create the folder ({error.strerror})"
        ) from None


def _remove_stale(targets: list[Path]) -> None:
    """The temporary copies of ``targets`` a run that died left: called under the folder's
    lock, which every writer holds while its temporaries exist."""
    for path in (path for target in targets for path in _temporaries(target, (".tmp",))):
        if path.is_file():
            path.unlink(missing_ok=True)


# This tool's mark in the name of each temporary it makes, ``.<name>.energy-index-XXXXXXXX.tmp``
# or ``.old``, the X's from tempfile. Only names carrying it are ever removed as stale: a
# person's ``.site.20261130.old/`` or ``.index.json.mybackup.tmp`` beside an output is theirs.
TEMPORARY_MARK = "energy-index"
_TEMPORARY_PART = re.compile(rf"{TEMPORARY_MARK}-[a-z0-9_]{{8}}")


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """SIGINT is held back while the renames run, then delivered: Ctrl-C never splits a set.

    By swapping the handler rather than masking the signal: any thread may receive a
    process-directed signal, and masking only the main thread's would not hold it back.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)


def _staged_copy(target: Path, data: bytes) -> str:
    try:
        descriptor, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.{TEMPORARY_MARK}-", suffix=".tmp"
        )
    except OSError as error:  # no inode left: the same words as a disk full at the write
        raise unwritable(target, error) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
    except BaseException as error:
        os.unlink(temporary)
        if isinstance(error, OSError):
            raise unwritable(target, error) from None
        raise
    return temporary


def _syncfs(descriptor: int) -> None:
    """Everything written on the filesystem of ``descriptor`` on disk, and any writeback error
    since the descriptor was opened raised: one call for a tree. An fsync per file was 1.3 s
    more cpu and 3 s more wall for the 11,009 files of a 10⁵-configuration site (ext4 without a
    journal writes each file's inode block and its folder apart; one syncfs writes them
    together), and it puts the folders' entries on disk too. It also writes what other programs
    left unwritten on that filesystem: wall time, not this process's cpu."""
    syncfs = _syncfs_call()
    assert syncfs is not None
    if syncfs(descriptor) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


@functools.cache
def _syncfs_call() -> Callable[[int], int] | None:
    """Linux's syncfs(2), or None where the system has none, or one that does not report a
    file's writeback error (before Linux 5.8): then each file of a tree is synced on its own."""
    release = re.match(r"(\d+)\.(\d+)", os.uname().release) if sys.platform == "linux" else None
    if release is None or (int(release[1]), int(release[2])) < (5, 8):
        return None
    return getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)


_RENAME_EXCHANGE = 2  # linux/fs.h: swap two paths atomically


def write_directory(
    target: Path,
    files: Mapping[str, bytes],
    *,
    manifest: str = SNAPSHOT_MANIFEST,
    keep_edits: bool = False,
) -> None:
    """Replace a directory by one holding exactly ``files`` (relative paths), all or nothing.

    Only a directory this tool wrote is replaced (see ``writable_directory``). The new tree is
    written beside the target as ``.<name>.energy-index-XXXXXXXX.tmp`` and swapped with it in
    one atomic exchange (Linux ``renameat2(RENAME_EXCHANGE)``), so that a run killed at any
    instant leaves the target holding the old tree or the new one, never neither; the old tree
    is removed only after the new one is in place. Where the exchange is not available the old
    tree is first renamed to ``.<name>.energy-index-XXXXXXXX.old``, and the next run puts it
    back if it was left there. Temporaries a killed run left are removed by the next one.
    With ``keep_edits``, a listed file whose bytes are no longer those ``manifest`` records
    (edited by hand) is not overwritten: the whole write is refused naming it (UsageError).
    """
    write_files({}, directories={target: files}, manifest=manifest, keep_edits=keep_edits)


def _inside_names(target: Path, files: Mapping[str, bytes]) -> None:
    for relative in files:
        parts = Path(relative).parts
        if not parts or Path(relative).is_absolute() or ".." in parts:
            raise OutputError(
                f"{shown(target, path=True)}: {shown(relative, quote=True)} is not a path inside "
                "the directory"
            )


def _staged_tree(target: Path, files: Mapping[str, bytes]) -> Path:
    """``files`` written in full in a new folder beside ``target``,
    ``.<name>.energy-index-XXXXXXXX.tmp``; a failure removes it and names the file of
    ``target`` that was being written, never the temporary."""
    try:
        staging = Path(
            tempfile.mkdtemp(
                dir=target.parent, prefix=f".{target.name}.{TEMPORARY_MARK}-", suffix=".tmp"
            )
        )
    except OSError as error:  # no inode left, say: the folder is what cannot be written
        raise unwritable(target, error) from None
    relative = ""
    made = {staging}  # folders made: a mkdir per file was 11,009 calls for 5,500 folders

    def write(each: bool) -> None:
        """Every file written; with ``each``, synced on the descriptor that wrote it."""
        nonlocal relative
        for relative, data in files.items():
            path = staging / relative
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            with open(path, "wb") as handle:
                handle.write(data)
                if each:
                    handle.flush()
                    os.fsync(handle.fileno())
        relative = ""

    folder = None
    try:
        if _syncfs_call() is not None:
            # Opened before any file is written: syncfs reports the writeback errors since its
            # descriptor was opened, even one that another program's syncfs saw first.
            folder = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
        write(each=folder is None)
        if folder is not None:
            try:
                _syncfs(folder)
            except OSError:
                # A writeback error (ours, or another program's on the filesystem) or a system
                # that refuses the call: every file written again and synced on the descriptor
                # that wrote it, which reports its own error (a new descriptor's fsync misses
                # one once the file has left memory); where none fails, the tree is on disk.
                write(each=True)
        os.chmod(staging, 0o755)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise unwritable(target / relative, error) from None
        raise
    finally:
        if folder is not None:
            os.close(folder)
    return staging


def writable_directory(
    target: Path, *, manifest: str = SNAPSHOT_MANIFEST, keep_edits: bool = False
) -> None:
    """Make ``target`` ready to be replaced by ``write_directory``, or refuse it (UsageError).

    Removes the temporaries a killed run left beside it (and first puts back a tree retired
    to ``.<name>.energy-index-XXXXXXXX.old`` if the target is missing). Then refuses, touching
    nothing, a target that is not a directory this tool wrote: a file, a link, or a directory
    holding anything but ``manifest`` and the files that ``manifest``'s ``files`` lists. A
    directory that does not exist or is empty is fine.

    Example: ``writable_directory(Path("output"))`` → UsageError (it holds index.json).
    """
    target = Path(os.path.abspath(target))
    _named(target)
    if not target.parent.is_dir():
        return  # nothing there yet: nothing to clean, nothing to refuse
    with folder_lock(target.parent):
        _checked(target, manifest=manifest, keep_edits=keep_edits)


def _named(target: Path) -> None:
    if target == target.parent:
        raise UsageError(f"{shown(target, path=True)}: names no directory to write")


def _checked(target: Path, *, manifest: str, keep_edits: bool = False) -> None:
    """Under the folder's lock: clean what a killed run left, then refuse what is not ours
    (and, with ``keep_edits``, what a person changed since)."""
    _recovered(target, manifest=manifest)
    listing, problem = _replace_problem(target, manifest=manifest)
    if problem is None and keep_edits and listing is not None:
        edited = _edited(target, listing, manifest=manifest)
        if edited:
            problem = (
                f"holds what was changed since this tool wrote it (its sha256 is not the one "
                f"{manifest} records): {listed(edited, show=_cut)}; refusing to overwrite it, "
                "move it out or give --force"
            )
    if problem:
        raise UsageError(f"{shown(target, path=True)}: {problem}")


def _replace_problem(target: Path, *, manifest: str) -> tuple[SnapshotManifest | None, str | None]:
    """Why ``target`` may not be replaced (None: it may), and the listing it was told by, if
    any (what ``_edited`` then reads, not the file again)."""
    if target.is_symlink():
        return None, "a symbolic link; name the directory itself"
    if not target.exists():
        return None, None
    if not target.is_dir():
        return None, "not a directory (a file is there); refusing to replace it"
    entries = _entries(target)
    if not entries:
        return None, None
    listing, why = _listing(target, manifest=manifest)
    if listing is None:
        return None, (
            f"not {'a snapshot directory' if manifest == SNAPSHOT_MANIFEST else 'a folder'} "
            f"this tool wrote ({why}) and not empty: {listed(entries, show=_cut)}; refusing to "
            "replace it, name a new or empty directory"
        )
    foreign = _unlisted(entries, listing, manifest=manifest)
    if foreign:
        return listing, (
            f"holds what its {manifest} does not list: {listed(foreign, show=_cut)}; refusing to "
            "replace it, move them out first or name another directory"
        )
    return listing, None


def _unlisted(entries: list[str], listing: SnapshotManifest, *, manifest: str) -> list[str]:
    """The ``entries`` a listing does not account for: neither the manifest, nor a listed file,
    nor a folder on the way to one."""
    names = set(listing.files)
    # A listed name's folders are its text up to each "/": a manifest's names have no empty,
    # "." or ".." part (manifest.name_problem). Path(name).parents was a fifth of the check's cpu.
    folders: set[str] = set()
    for name in names:
        end = name.rfind("/")
        while end > 0 and name[:end] not in folders:  # its own folders were added with it
            folders.add(name[:end])
            end = name.rfind("/", 0, end)
    allowed = names | folders | {manifest}
    return [entry for entry in entries if entry not in allowed]


def _entries(directory: Path) -> list[str]:
    """Every path under ``directory``, relative, without following links. A loop, not
    ``os.walk``: that recurses, and a folder nested a thousand deep stopped it."""
    found = []
    pending = [""]  # relative paths of the folders to list, "" the directory itself
    while pending:
        folder = pending.pop()
        with os.scandir(directory / folder) as entries:
            for entry in entries:
                relative = f"{folder}/{entry.name}" if folder else entry.name
                found.append(relative)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(relative)
    return sorted(found)


def _listing(folder: Path, *, manifest: str) -> tuple[SnapshotManifest | None, str]:
    """The manifest that lists what ``folder`` holds, read as every manifest is (names and
    sha256 only); None and why, if there is none this tool could have written."""
    path = folder / manifest
    if path.is_symlink():
        return None, f"its {manifest} is a symbolic link"
    if not os.path.lexists(path):
        return None, f"no {manifest} listing its files"
    try:
        return read_manifest(folder, checks=Checks.LISTING, name=manifest), ""
    except SourceError as error:
        return None, str(error)


def _edited(target: Path, listing: SnapshotManifest, *, manifest: str) -> list[str]:
    """The files ``listing`` (``target``'s ``manifest``) lists whose bytes now differ from their
    sha256; a listed file since removed is not an edit to keep."""
    safe = {""}  # folders under target found to be no link, each checked once
    paths = {name: _inside(target, name, manifest=manifest, safe=safe) for name in listing.files}
    edited = []
    for name, path in paths.items():  # every name checked before any file is read
        if not os.path.lexists(path):
            continue
        try:
            actual: str | None = hashlib.sha256(local_bytes(path)).hexdigest()
        except SourceError:
            actual = None  # a file replaced by a link, a FIFO, a folder: changed too
        if actual != listing.sha256(name):
            edited.append(name)
    return sorted(edited)


def _inside(target: Path, name: str, *, manifest: str, safe: set[str]) -> Path:
    """``target / name``, refused (UsageError) when a symbolic link is on the way: the manifest
    is anyone's to edit (its names were checked as it was read), and a name through a link
    could have any readable file hashed. ``safe``: the folders (relative) already found to be
    no link on the way, added to; only the parts of ``name`` below the deepest of them are
    looked at (a site's 11,009 files are in 5,500 folders)."""
    folder = known = name.rpartition("/")[0]
    while known not in safe:  # "" (``target`` itself) is
        known = known.rpartition("/")[0]
    below = name[len(known) + 1 :] if known else name
    if link_on_the_way(target / known, below) is not None:
        raise UsageError(
            f"{shown(target, path=True)}: {manifest} lists {shown(name, quote=True)}, a name "
            "outside the folder (through a link); refused, nothing read"
        )
    while folder not in safe:
        safe.add(folder)
        folder = folder.rpartition("/")[0]
    return target / name


def _cut(name: str) -> str:
    """A name escaped and cut at QUOTED_CHARACTERS: a folder's names are anyone's, and six of
    250 characters made a refusal of 1,400 (errors.shown's count of characters would take one
    of five past the 700 its test holds it to)."""
    escaped = repr(name)[1:-1]
    return escaped if len(escaped) <= QUOTED_CHARACTERS else f"{escaped[:QUOTED_CHARACTERS]}…"


def _temporaries(target: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    """The temporaries of ``target`` this tool made (``.<name>.energy-index-XXXXXXXX<suffix>``),
    never a link."""
    for path in target.parent.glob(f".{glob.escape(target.name)}.*"):
        middle = path.name[len(target.name) + 2 : -4]
        if path.suffix in suffixes and _TEMPORARY_PART.fullmatch(middle) and not path.is_symlink():
            yield path


def _recovered(target: Path, *, manifest: str) -> None:
    """Remove what a killed ``write_directory`` left beside ``target``; restore a retired tree
    when the target itself is missing. Called under the folder's lock."""
    # The staged (.tmp) and retired (.old) trees, oldest first.
    leftovers = sorted(
        (path for path in _temporaries(target, (".tmp", ".old")) if path.is_dir()),
        key=lambda path: path.stat().st_mtime,
    )
    if not target.exists() and not target.is_symlink():
        retired = [p for p in leftovers if p.suffix == ".old" and _listing(p, manifest=manifest)[0]]
        if retired:
            os.rename(retired[-1], target)
            leftovers.remove(retired[-1])
    for path in leftovers:
        shutil.rmtree(path, ignore_errors=True)


def _swapped_in(staging: Path, target: Path) -> None:
    """Put ``staging`` at ``target``; afterwards ``staging`` holds the old tree, if any."""
    if not target.exists():
        os.rename(staging, target)
        return
    if _exchanged(staging, target):
        return
    retired = staging.with_suffix(".old")
    os.rename(target, retired)
    try:
        os.rename(staging, target)
    except OSError:
        os.rename(retired, target)
        raise
    os.rename(retired, staging)  # so that the caller's clean-up removes it


def _exchanged(first: Path, second: Path) -> bool:
    """Swap two directories atomically; False where the system cannot (then nothing moved)."""
    if sys.platform != "linux":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_cwd = -100  # AT_FDCWD: the paths are absolute anyway
    if renameat2(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # filesystem or kernel without it
        return False
    raise OSError(code, os.strerror(code), str(second))


@contextlib.contextmanager
def exclusive_lock(path: Path, *, wait_seconds: float, busy: str) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made if missing), waiting for another holder
    up to ``wait_seconds``; then raise LockBusy saying ``busy``.

    The file is removed by its holder before it lets go, so that no run, failed or not, leaves
    it behind; a waiter that then gets the lock of the removed file sees that ``path`` is no
    longer that file and starts again on the new one.
    """
    deadline = time.monotonic() + wait_seconds
    while True:
        handle = _lock_file(path)
        try:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockBusy(f"{shown(path, path=True)}: {busy}") from None
                    time.sleep(0.1)
            if _same_file(handle.fileno(), path):
                break
        except BaseException:
            handle.close()
            raise
        handle.close()  # the lock of a file its holder removed: start again
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _lock_file(path: Path) -> IO[str]:
    # A full disk or inode table stops a run here first: named as any output that cannot be.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "a+")
    except OSError as error:
        raise unwritable(error.filename or path, error) from None


def unwritable(path: Path | str, error: OSError) -> OutputError:
    """The one refusal of an output that cannot be written (a full disk or inode table, a
    read-only filesystem), naming it: ``out/index.json: cannot be written (No space left on
    device)``."""
    return OutputError(f"{shown(path, path=True)}: cannot be written ({error.strerror})")


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)
