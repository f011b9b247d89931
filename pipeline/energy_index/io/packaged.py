"""What the installed package carries, so that its defaults work in an empty folder.

A wheel holds copies of the checkout's vendored snapshots and of the index built from them
(``energy_index/data/``, made from the checkout's files at build time: pyproject.toml's
force-include, so there is one source of truth). A default path (``snapshots/…``) names the
folder of that name in the working directory when there is one, as in a checkout, where the
regenerated snapshot is what ``make index`` builds; elsewhere it names the installed copy.
"""

from __future__ import annotations

import os
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
    copy the package carries (if it carries one)."""
    given = Path(path)
    if given != Path(default) or os.path.lexists(given):
        return given
    return installed_copy(default) or given
