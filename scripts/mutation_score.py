"""Print the mutation score of the last ``mutmut run``, and the survivors nobody has reviewed.

A surviving mutant is either killed by a new test or listed in docs/mutation.md, by name in
backticks, with the reason it is equivalent (no test can tell it from the original). Exits 1
when a survivor is neither, so that a new one is looked at.

Example: python scripts/mutation_score.py   (after mutmut run; make mutate runs both)
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REVIEWED = Path(__file__).resolve().parent.parent / "docs" / "mutation.md"
_RESULT = re.compile(r"^\s*(\S+): (.+)$")


def statuses(results: str) -> dict[str, str]:
    """Mutant name → status, from the output of ``mutmut results --all true``."""
    return {m[1]: m[2] for line in results.splitlines() if (m := _RESULT.match(line))}


def listed_equivalent(text: str) -> set[str]:
    """The mutant names written in backticks in docs/mutation.md."""
    return set(re.findall(r"`([\w.]+__mutmut_\d+)`", text))


def main() -> int:
    results = subprocess.run(
        [sys.executable, Path(__file__).with_name("mutate.py"), "results", "--all", "true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    status = statuses(results)
    if not status:
        print("no mutants: run mutmut run first (make mutate)", file=sys.stderr)
        return 2
    counts = Counter(status.values())
    # A mutant that makes a test hang fails it too (a CI job's time limit), as mutmut counts it;
    # one that crashes the test process (mutmut's "segfault": polars given a null column name)
    # fails the run as surely.
    survivors = {name for name, s in status.items() if s not in ("killed", "timeout", "segfault")}
    equivalent = listed_equivalent(REVIEWED.read_text()) if REVIEWED.exists() else set()
    unreviewed = sorted(survivors - equivalent)
    total, killed = len(status), counts["killed"] + counts["timeout"] + counts["segfault"]
    listed = len(survivors & equivalent)
    print(
        f"mutation score: {killed}/{total} mutants killed (a timeout or a crash too) = "
        f"{100 * killed / total:.1f} %; "
        f"{listed} listed as equivalent in docs/mutation.md, so "
        f"{killed}/{total - listed} = {100 * killed / (total - listed):.1f} % of the others"
    )
    print("  " + ", ".join(f"{s}: {n}" for s, n in sorted(counts.items())))
    stale = sorted(equivalent - survivors)
    if stale:
        print(f"  listed but not surviving (update docs/mutation.md): {', '.join(stale)}")
    if unreviewed:
        print(f"{len(unreviewed)} survivor(s) neither killed nor listed as equivalent:")
        for name in unreviewed:
            print(f"  {name}: {status[name]}  (python scripts/mutate.py show {name})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
