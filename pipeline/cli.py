"""The ``energy-index`` command line.

Heavy libraries (polars, pandera, httpx, jsonschema) are imported inside the commands, so that
``--help`` answers at once.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

import click

from pipeline import __version__

# Until the live fetch lands, builds read the snapshot that sits beside a checkout.
DEFAULT_SOURCE = (
    Path(__file__).resolve().parent.parent.parent / "shared/upstream/ml-energy-leaderboard"
)
DEFAULT_OUT = Path("output/index.json")

EXIT_CODES = """\b
Exit codes:
  0  success
  1  data or validation failure (bad input, schema violation, audit difference)
  2  usage error (unknown option, bad value)
  3  network failure after retries"""

F = TypeVar("F", bound=Callable[..., Any])


class IsoDate(click.ParamType):
    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        try:
            if date.fromisoformat(value).isoformat() == value:
                return str(value)
        except (TypeError, ValueError):
            pass
        self.fail(f"{value!r} is not a date YYYY-MM-DD", param, ctx)


def reports_errors(command: F) -> F:
    """Turn the pipeline's own errors into a message on stderr and their exit code."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from pipeline.errors import EnergyIndexError

        try:
            return command(*args, **kwargs)
        except EnergyIndexError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(error.exit_code)

    return wrapper  # type: ignore[return-value]


@click.group(epilog=EXIT_CODES, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="energy-index")
def main() -> None:
    """Rebuild the energy-per-output-token index of LLMs from the ML.ENERGY Leaderboard.

    Each row is, for one model on one GPU type, the stable serving configuration with the lowest
    energy per output token whose median inter-token latency stays within a deadline.

    Example:

        energy-index build --from ../shared/upstream/ml-energy-leaderboard
    """


source_option = click.option(
    "--from",
    "source",
    type=click.Path(path_type=Path),
    default=DEFAULT_SOURCE,
    show_default="the snapshot in ../shared beside the checkout",
    help="Snapshot directory to build from (upstream paths plus snapshot.json).",
)
task_option = click.option(
    "--task", default="lm-arena-chat", show_default=True, help="Upstream task to index."
)
deadline_option = click.option(
    "--itl-deadline-ms",
    type=click.FloatRange(min=0, min_open=True),
    default=500.0,
    show_default=True,
    help="Median inter-token latency ceiling, inclusive.",
)


@main.command(epilog=EXIT_CODES)
@source_option
@task_option
@deadline_option
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Index file to write; its build report goes beside it as <name>.report.json.",
)
@click.option(
    "--retrieved", type=IsoDate(), help="Date the data was retrieved [default: the snapshot's]."
)
@click.option("--updated", type=IsoDate(), help="Date the file is written [default: --retrieved].")
@reports_errors
def build(
    source: Path,
    task: str,
    itl_deadline_ms: float,
    out: Path,
    retrieved: str | None,
    updated: str | None,
) -> None:
    """Build the index from a snapshot and write it with its build report.

    Nothing is written unless every stage succeeds: an existing index stays as it was.

    Example:

        energy-index build --from ../shared/upstream/ml-energy-leaderboard \\
            --retrieved 2026-09-26 --updated 2026-09-27 --out output/index.json
    """
    from pipeline.run import BuildSettings, report_path, run

    settings = BuildSettings(
        task=task, itl_deadline_ms=itl_deadline_ms, retrieved=retrieved, updated=updated
    )
    result = run(source, out=out, settings=settings)
    counts = result.report["counts"]
    click.echo(
        f"wrote {out} ({counts['rows']} rows from {counts['stable']} stable of "
        f"{counts['configurations']} configurations) and {report_path(out)}"
    )


@main.command(epilog=EXIT_CODES)
@click.option(
    "--published",
    type=click.Path(path_type=Path),
    required=True,
    help="The published index file to check.",
)
@source_option
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@reports_errors
def audit(published: Path, source: Path, as_json: bool) -> None:
    """Rebuild the index in memory and compare it with a published copy.

    Rows are matched by row_id and compared field by field; header keys too. The dates updated,
    data_version and source.retrieved are volatile: shown, never failing. The rebuild uses the
    published file's task and deadline. Exit 0 only when nothing else differs.

    Example:

        energy-index audit --published ../shared/published/index.json
    """
    from pipeline.audit import audit as compare
    from pipeline.run import BuildSettings, build

    document = _read_index(published)
    settings = BuildSettings(
        task=_task_of(document), itl_deadline_ms=float(document.get("itl_deadline_ms", 500))
    )
    result = compare(document, build(source, settings=settings).document)
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
    else:
        for line in result.lines():
            click.echo(line)
    sys.exit(0 if result.identical else 1)


@main.command(epilog=EXIT_CODES)
@click.argument("path", type=click.Path(path_type=Path))
@reports_errors
def validate(path: Path) -> None:
    """Check an index file against schemas/index.schema.json.

    Example:

        energy-index validate output/index.json
    """
    from pipeline.emit import schema_problems

    problems = schema_problems(_read_index(path))
    for problem in problems:
        click.echo(f"{path}: {problem}", err=True)
    if problems:
        sys.exit(1)
    click.echo(f"{path}: valid against schemas/index.schema.json")


def _read_index(path: Path) -> dict[str, Any]:
    from pipeline.errors import SourceError

    try:
        document = json.loads(path.read_bytes())
    except OSError as error:
        raise SourceError(f"{path}: cannot be read ({error.strerror})") from None
    except ValueError as error:
        raise SourceError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise SourceError(f"{path}: expected a JSON object (an index), got something else")
    return document


def _task_of(document: dict[str, Any]) -> str:
    data_url = str(document.get("source", {}).get("data_url", ""))
    name = data_url.rsplit("/", 1)[-1]
    return name.removesuffix(".json") if name.endswith(".json") else "lm-arena-chat"
