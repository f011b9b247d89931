"""`make bench`: time the pipeline against the plain-Python reference, and the cold start.

Every figure in the table comes from this one run. Each command runs in its own process; wall
time is measured around it and peak RSS is the child's own (wait4). Before timing a size, the
pipeline's rows and the reference's rows are checked to be identical.

Example: python bench/run.py --sizes 1000,100000 --out docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from snapshot import TASK_PATH, write_snapshot

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data"
VENDORED_SNAPSHOT = ROOT / "snapshots" / "ml-energy-leaderboard"
PYTHON = sys.executable
IMPORT_FLOOR = "import polars, pandera.polars, httpx, jsonschema"


def measured(command: list[str], *, stdout: Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one command, run in its own process."""
    sink = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
    try:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.PIPE, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    finally:
        if stdout:
            sink.close()
    if os.waitstatus_to_exitcode(status) != 0:
        error = process.stderr.read().decode() if process.stderr else ""
        raise SystemExit(f"{' '.join(command)} failed:\n{error}")
    return wall, usage.ru_maxrss / 1024


def best_of(runs: int, command: list[str], **options: Path) -> tuple[float, float]:
    results = [measured(command, **options) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def snapshot_for(size: int, seed: int) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    source = DATA / f"tasks-{size}-seed{seed}.json"
    if not source.exists():
        # In its own process: a runner grown to gigabytes would lend its size to every child
        # it forks (ru_maxrss counts the pages shared before exec).
        partial = source.with_suffix(".tmp")
        command = [PYTHON, "generate.py", str(size), "--seed", str(seed), "--out", str(partial)]
        subprocess.run(command, check=True, cwd=Path(__file__).parent)
        partial.rename(source)
    return write_snapshot(DATA / f"snapshot-{size}-seed{seed}", source)


def pipeline_command(snapshot: Path, out: Path) -> list[str]:
    command = [PYTHON, "-m", "pipeline", "build", "--from", str(snapshot), "--out", str(out)]
    return [*command, "--quiet"]


def check_identical(snapshot: Path, work: Path) -> int:
    out = work / "index.json"
    measured(pipeline_command(snapshot, out))
    measured([PYTHON, "bench/reference.py", str(snapshot / TASK_PATH)], stdout=work / "ref.json")
    pipeline_rows = json.loads(out.read_bytes())["rows"]
    reference_rows = json.loads((work / "ref.json").read_bytes())
    if pipeline_rows != reference_rows:
        raise SystemExit(f"{snapshot}: the pipeline and the reference disagree; no timing")
    out.unlink()
    (work / "index.report.json").unlink()
    return len(pipeline_rows)


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import importlib.metadata as metadata

    versions = ", ".join(
        f"{name} {metadata.version(name)}"
        for name in ("polars", "pandera", "msgspec", "jsonschema", "httpx")
    )
    return (
        f"{os.cpu_count()} cores ({cpu}), {memory:.0f} GiB memory, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}; {versions}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3, help="best of N (1 at 10⁶)")
    parser.add_argument("--out", type=Path, help="also write the results as Markdown here")
    arguments = parser.parse_args()
    sizes = [int(s) for s in arguments.sizes.split(",")]

    cold_runs = max(arguments.runs, 5)
    floor = best_of(cold_runs, [PYTHON, "-c", IMPORT_FLOOR])
    help_time = best_of(cold_runs, [PYTHON, "-m", "pipeline", "--help"])
    lines = []
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        shared = best_of(cold_runs, pipeline_command(VENDORED_SNAPSHOT, work / "shared.json"))
        for size in sizes:
            snapshot = snapshot_for(size, arguments.seed)
            megabytes = (snapshot / TASK_PATH).stat().st_size / 2**20
            rows = check_identical(snapshot, work)
            runs = 1 if size >= 1_000_000 else arguments.runs
            ours = best_of(runs, pipeline_command(snapshot, work / "index.json"))
            theirs = best_of(
                runs, [PYTHON, "bench/reference.py", str(snapshot / TASK_PATH)], stdout=work / "r"
            )
            lines.append(
                f"| {size:,} | {megabytes:,.1f} | {rows:,} | {ours[0]:.2f} | {theirs[0]:.2f} | "
                f"{theirs[0] / ours[0]:.1f}× | {ours[1]:,.0f} | {theirs[1]:,.0f} | "
                f"{ours[1] / megabytes:.2f}× | {floor[0]:.2f} |"
            )
            print(lines[-1], flush=True)

    table = "\n".join(
        [
            "| configurations | input MiB | rows | pipeline s | reference s | speed-up | "
            "pipeline peak RSS MiB | reference peak RSS MiB | pipeline RSS ÷ input | "
            "import floor s |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            *lines,
        ]
    )
    cold = "\n".join(
        [
            "| what | wall s | peak RSS MiB |",
            "| --- | ---: | ---: |",
            f"| import floor (`{IMPORT_FLOOR}`) | {floor[0]:.2f} | {floor[1]:,.0f} |",
            f"| `energy-index --help` | {help_time[0]:.2f} | {help_time[1]:,.0f} |",
            f"| `energy-index build` from the vendored snapshot (328 configurations) | "
            f"{shared[0]:.2f} ({shared[0] / floor[0]:.2f}× the floor) | {shared[1]:,.0f} |",
        ]
    )
    largest = snapshot_for(max(sizes), arguments.seed)
    breakdown = json.loads(
        subprocess.run(
            [PYTHON, "stages.py", str(largest)],
            check=True, capture_output=True, text=True, cwd=Path(__file__).parent,
        ).stdout
    )  # fmt: skip
    total = sum(seconds for _, seconds in breakdown["stages"])
    stages = "\n".join(
        ["| stage | s | share |", "| --- | ---: | ---: |"]
        + [f"| {name} | {sec:.2f} | {sec / total:.0%} |" for name, sec in breakdown["stages"]]
    )
    parsers = "\n".join(
        ["| parser | time, peak RSS (bytes in memory included) |", "| --- | --- |"]
        + [f"| {name} | {result} |" for name, result in breakdown["parsers"]]
    )
    print(f"\n{cold}\n\n{stages}\n\n{parsers}\n\nmachine: {machine()}")
    if arguments.out:
        arguments.out.write_text(
            f"# Benchmarks\n\nMachine: {machine()}.\n\nMeasured by `make bench` "
            f"(`bench/run.py`, seed {arguments.seed}; best of {arguments.runs} runs, one at 10⁶, "
            f"best of {cold_runs} for the cold start); each command in its own process.\n\n"
            f"## Cold start\n\n{cold}\n\n"
            f"## Scale\n\n{table}\n\n"
            f"## Where the time goes at {max(sizes):,} configurations (one process, after imports)"
            f"\n\n{stages}\n\n## JSON parsers on the same file\n\n{parsers}\n"
        )


if __name__ == "__main__":
    main()
