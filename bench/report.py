"""Time `energy-index report` and `energy-index site` (cpu seconds and peak RSS of the whole
process) on the real index and on generated indexes of growing size, to show that both grow
linearly with the index's rows (issue 27: the site grew with rows × countries).

Each size is a generated task file (bench/generate.py, seed 1) built into an index first; the
report and the site then read that index, its build report and the snapshot. Best of N runs;
cpu is the child's user + system time (wait4), peak RSS the largest of the runs. The machine's
load average is written beside the table: the figures are cpu, but a loaded machine slows them.

The site is timed twice: written into a new folder (each run its own, nothing deleted until
the end), and replacing the site it wrote before (which reads and hashes the old files, for a
person's edits, and removes the old tree). Each replacing run, and the first run of each size,
waits --settle seconds first:
ext4 without a journal (this machine's disk) passes over inodes freed in the last minute when
it makes files, so a site made just after a site was removed paid up to 5 s more of system
cpu, which the same site made a week after its last does not (docs/performance.md).

Example: python bench/report.py --configurations 8000,32500,100000 --many-groups 100000 \
    --out ../docs/report-benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import ROOT, VENDORED_SNAPSHOT, snapshot_for

PYTHON = sys.executable


def cpu(command: list[str]) -> tuple[float, float]:
    """Cpu seconds (user + system) and peak RSS MiB of one command in its own process."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        error = process.stderr.read().decode() if process.stderr else ""
        raise SystemExit(f"{' '.join(command)} failed:\n{error}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def report_command(index: Path, snapshot: Path, out: Path) -> list[str]:
    return [PYTHON, "-m", "energy_index", "report", "--index", str(index), "--from", str(snapshot),
            "--out", str(out), "--quiet"]  # fmt: skip


def site_command(index: Path, snapshot: Path, out: Path) -> list[str]:
    return [PYTHON, "-m", "energy_index", "site", "--index", str(index), "--from", str(snapshot),
            "--out", str(out), "--quiet"]  # fmt: skip


def folder_size(folder: Path) -> tuple[int, int]:
    """Bytes and files of a folder, every file under it."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configurations", default="8000,32500,100000")
    # The many-groups shape too: its index has a row per about 10 configurations, not 32, and
    # the site's files grow with the rows (issue 36 measured it there).
    parser.add_argument("--many-groups", default="100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--settle", type=float, default=65.0, help="seconds before a replacing run")
    parser.add_argument("--out", type=Path)
    arguments = parser.parse_args()
    lines, site_lines = [], []
    loads = [load_average()]
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        cases = [
            ("the real index (output/index.json)", ROOT / "output/index.json", VENDORED_SNAPSHOT)
        ]
        sizes = [(int(s), "few-groups") for s in arguments.configurations.split(",") if s]
        sizes += [(int(s), "many-groups") for s in arguments.many_groups.split(",") if s]
        for size, shape in sizes:
            snapshot = snapshot_for(size, 1, shape)
            index = work / f"{shape}-{size}" / "index.json"
            build = [PYTHON, "-m", "energy_index", "build", "--from", str(snapshot),
                     "--out", str(index), "--quiet"]  # fmt: skip
            subprocess.run(build, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
            cases.append((f"{size:,} generated configurations, {shape}", index, snapshot))
        for name, index, snapshot in cases:
            out = work / "report.html"
            runs = [cpu(report_command(index, snapshot, out)) for _ in range(arguments.runs)]
            rows = len(json.loads(index.read_bytes())["rows"])
            line = (
                f"| {name} | {rows:,} | {min(r[0] for r in runs):.2f} | "
                f"{max(r[1] for r in runs):,.0f} | {out.stat().st_size / 2**10:,.0f} |"
            )
            lines.append(line)
            print(line, flush=True)
            sites = [work / f"site-{len(site_lines)}-{run}" for run in range(arguments.runs)]
            time.sleep(arguments.settle)  # the last case's replacing runs removed their old trees
            runs = [cpu(site_command(index, snapshot, site)) for site in sites]
            replacing = []
            for site in sites:
                time.sleep(arguments.settle)
                replacing.append(cpu(site_command(index, snapshot, site)))
            size, files = folder_size(sites[0])
            line = (
                f"| {name} | {rows:,} | {min(r[0] for r in runs):.2f} | "
                f"{min(r[0] for r in replacing):.2f} | "
                f"{max(r[1] for r in runs + replacing):,.0f} | {size / 2**20:,.1f} | {files:,} |"
            )
            site_lines.append(line)
            print(line, flush=True)
    loads.append(load_average())
    table = "\n".join(
        [
            "# `energy-index report`: cpu by index size",
            "",
            f"Measured by `python bench/report.py` (best of {arguments.runs}; cpu = user + system "
            "seconds of the whole process, imports included).",
            "",
            "| input | index rows | cpu s | peak RSS MiB | page KiB |",
            "| --- | ---: | ---: | ---: | ---: |",
            *lines,
            "",
            "# `energy-index site`: cpu and size by index size",
            "",
            "The real index's site has every task; a generated snapshot holds one task. cpu s: "
            "into a new folder; replacing: over the site it wrote before, "
            f"{arguments.settle:g} s after anything was deleted (this disk passes over inodes "
            "freed in the last minute: docs/performance.md). Peak RSS: the largest of both.",
            "",
            "| input | index rows | cpu s | replacing, cpu s | peak RSS MiB | site MiB | files |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            *site_lines,
            "",
            f"Load average (1 / 5 / 15 min) at the start: {loads[0]}; at the end: {loads[1]}.",
            "",
        ]
    )
    if arguments.out:
        arguments.out.write_text(table)


if __name__ == "__main__":
    main()
