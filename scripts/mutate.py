"""``make mutate``: mutmut 3, told that pipeline/ is the source root (as it knows src/).

mutmut names a mutant by its file's path with only a leading ``src.`` dropped, so a function of
``pipeline/energy_index/steps/curves.py`` would be ``pipeline.energy_index.steps.curves.…``,
while the tests import it, and the trampoline records it, as ``energy_index.steps.curves.…``:
no mutant would match a test. Here the leading ``pipeline.`` is dropped too. The tests import
the mutated copy, mutants/pipeline/, through tests/conftest.py (``_mutated_package_first``).

The patch is made at import, so that the fork server mutmut's workers come from (which imports
this main module) has it too. Usage: ``python scripts/mutate.py run`` (any mutmut command).
"""

from __future__ import annotations

import sys
from pathlib import Path

import mutmut.__main__
import mutmut.mutation.file_mutation
import mutmut.utils.format_utils

SOURCE_ROOT = "pipeline."
_named = mutmut.utils.format_utils.get_mutant_name


def get_mutant_name(relative_source_path: Path, mutant_method_name: str) -> str:
    return _named(relative_source_path, mutant_method_name).removeprefix(SOURCE_ROOT)


for module in (mutmut.utils.format_utils, mutmut.mutation.file_mutation, mutmut.__main__):
    module.get_mutant_name = get_mutant_name  # type: ignore[attr-defined]

if __name__ == "__main__":
    sys.argv[0] = "mutmut"
    sys.exit(mutmut.__main__.cli())
