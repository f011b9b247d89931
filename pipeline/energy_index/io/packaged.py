"""What the installed package carries, so that its defaults work in an empty folder.

A wheel holds copies of the checkout's vendored snapshots and of the index built from them
(``energy_index/data/``, made from the checkout's files at build time: pyproject.toml's
force-include, so there is one source of truth). A default path (``snapshots/…``) names the
folder of that name in the working directory when there is one, as in a checkout, where the
regenerated snapshot is what ``make index`` builds; in a subfolder of a checkout, the checkout's
(and a default output path goes to the checkout, not into the subfolder); elsewhere it names the
installed copy.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from energy_index.settings import DEFAULT_OUT

DATA = Path(__file__).resolve().parent.parent / "data"
# The checkout, when the package runs from one (an editable install): pipeline/energy_index/.
CHECKOUT = Path(__file__).resolve().parents[3]
# Where the wheel puts each default path (pyproject.toml's force-include says the same).
PUBLISHED = "published/index.json"


def installed_copy(relative: str) -> Path | None:
    """The package's copy of the checkout path ``relative``: in the wheel, or, running from a
    checkout (an editable install), the checkout's own. None when there is neither."""
    wheel = DATA / (PUBLISHED if relative == DEFAULT_OUT else relative)
    if os.path.lexists(wheel):
        return wheel
    checkout = CHECKOUT / relative
    if (CHECKOUT / "pyproject.toml").is_file() and os.path.lexists(checkout):
        return checkout
    return None


def located(path: str | os.PathLike[str], *, default: str) -> Path:
    """``path`` as given, unless it is ``default`` and nothing of that name is here: then the
    checkout's, in a subfolder of a checkout (``enclosing_checkout``), else the copy the package
    carries (if it carries one)."""
    given = Path(path)
    if given != Path(default) or os.path.lexists(given):
        return given
    root = enclosing_checkout()
    if root is not None and os.path.lexists(root / default):
        return root / default  # in a checkout's subfolder: the checkout's, not the package's
    return installed_copy(default) or given


# A checkout's pyproject.toml names the project so: how a folder above the working directory is
# told to be this project's checkout (a parent folder with another pyproject.toml is not).
_PROJECT_NAME = re.compile(r'^name\s*=\s*"energy-index"\s*$', re.MULTILINE)


def enclosing_checkout() -> Path | None:
    """The checkout of energy-index whose subfolder the working directory is (the nearest folder
    above it whose pyproject.toml names the project), relative to the working directory; None
    in the checkout's root itself, where every default path already names its own, and outside
    any checkout."""
    here = Path.cwd()
    for depth, folder in enumerate((here, *here.parents)):
        try:
            named = _PROJECT_NAME.search((folder / "pyproject.toml").read_text("utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if named:
            return Path(*[os.pardir] * depth) if depth else None
    return None


def at_checkout(path: str | os.PathLike[str], *, default: str) -> Path:
    """An output path: ``path`` as given, unless it is ``default`` and the command runs in a
    subfolder of a checkout: then that checkout's (``../output/index.json``), as a command run
    in the checkout's root writes it, not a new ``output/`` in the subfolder."""
    given = Path(path)
    root = enclosing_checkout() if given == Path(default) else None
    return given if root is None else root / default
