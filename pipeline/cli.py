"""The ``energy-index`` command line.

Heavy libraries (polars, pandera, httpx, jsonschema) are imported inside the commands, so that
``--help`` answers at once.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from pipeline import __version__

if TYPE_CHECKING:
    from pipeline.io.http import Downloader

DEFAULT_SOURCE = "https://github.com/ml-energy/leaderboard"
# The snapshot the committed output was built from, vendored in the repository: builds and
# audits default to it, so they run offline and give the committed bytes.
VENDORED_SNAPSHOT = "snapshots/ml-energy-leaderboard"
LIVE = "live"  # --from live: the upstream repository itself
DEFAULT_OUT = Path("output/index.json")
DEFAULT_CACHE = Path(".cache/upstream")
OFFLINE_HINT = (
    "hint: to build without network, pass a snapshot directory: --from DIR "
    "(make index FROM=DIR), e.g. snapshots/ml-energy-leaderboard"
)
CHANGED_EXIT_CODE = 10
INTERRUPTED_EXIT_CODE = 130

EXIT_CODES = """\b
Exit codes:
  0  success (regenerate: unchanged, or changed without --exit-code)
  1  data or validation failure (bad input, schema violation, audit difference)
  2  usage error (unknown option, bad value)
  3  network failure after retries (the message names the URL and the last error)
  10 regenerate --exit-code: the index changed
  130 interrupted (Ctrl-C): nothing replaced"""

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
        from pipeline.errors import EnergyIndexError, NetworkError

        try:
            return command(*args, **kwargs)
        except EnergyIndexError as error:
            click.echo(f"error: {_scrubbed(str(error))}", err=True)
            if isinstance(error, NetworkError):
                click.echo(OFFLINE_HINT, err=True)
            sys.exit(error.exit_code)
        except KeyboardInterrupt:
            # Every write is staged and renamed with SIGINT held back: nothing is half-done.
            click.echo("error: interrupted", err=True)
            sys.exit(INTERRUPTED_EXIT_CODE)
        except OSError as error:
            # The last line of defence: a file fault the code did not expect, named, no traceback.
            where = f"{error.filename}: " if error.filename else ""
            click.echo(f"error: {where}{error.strerror or error}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def _scrubbed(message: str) -> str:
    token = os.environ.get("GITHUB_TOKEN")
    if not token:
        return message
    from pipeline.io.http import scrubbed

    return scrubbed(message, token)


@dataclass(frozen=True)
class Network:
    """The network settings every command that may download shares."""

    ref: str | None
    api_base: str
    raw_base: str
    retries: int
    timeout: float
    backoff: float
    max_bytes: int
    quiet: bool

    @contextmanager
    def downloader(self) -> Iterator[Downloader]:
        from pipeline.io.http import Downloader, HttpSettings, bearer_token

        settings = HttpSettings(
            retries=self.retries,
            timeout=self.timeout,
            backoff=self.backoff,
            max_bytes=self.max_bytes,
            progress=not self.quiet and sys.stderr.isatty(),
            token=bearer_token(os.environ.get("GITHUB_TOKEN")),
            token_scope=self.api_base,
        )
        with Downloader(settings) as downloader:
            yield downloader


_NETWORK_OPTIONS = [
    click.option("--ref", help="Upstream branch, tag or commit [default: master]."),
    click.option(
        "--api-base", envvar="ENERGY_INDEX_API_BASE", default="https://api.github.com",
        show_default=True, show_envvar=True, help="GitHub API base URL.",
    ),
    click.option(
        "--raw-base", envvar="ENERGY_INDEX_RAW_BASE", default="https://raw.githubusercontent.com",
        show_default=True, show_envvar=True, help="Base URL of raw files.",
    ),
    click.option(
        "--retries", envvar="ENERGY_INDEX_RETRIES", type=click.IntRange(min=0), default=3,
        show_default=True, show_envvar=True, help="Attempts after the first, per request.",
    ),
    click.option(
        "--timeout", envvar="ENERGY_INDEX_TIMEOUT", type=click.FloatRange(min=0, min_open=True),
        default=30.0, show_default=True, show_envvar=True,
        help="Seconds for each of connect, read and the whole of one attempt.",
    ),
    click.option(
        "--backoff", envvar="ENERGY_INDEX_BACKOFF", type=click.FloatRange(min=0), default=1.0,
        show_default=True, show_envvar=True,
        help="First delay between attempts in seconds; doubles each time, with jitter.",
    ),
    click.option(
        "--max-bytes", envvar="ENERGY_INDEX_MAX_BYTES", type=click.IntRange(min=1),
        default=64 << 20, show_default=True, show_envvar=True,
        help="Largest response body accepted; a larger one is refused while it streams.",
    ),
    click.option("--quiet", is_flag=True, help="No progress display."),
]  # fmt: skip


def network_options(command: F) -> F:
    """Add the network options to a command and hand them to it as one ``network`` value."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        names = (
            "ref",
            "api_base",
            "raw_base",
            "retries",
            "timeout",
            "backoff",
            "max_bytes",
            "quiet",
        )
        network = Network(**{name: kwargs.pop(name) for name in names})
        return command(*args, network=network, **kwargs)

    for option in reversed(_NETWORK_OPTIONS):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


def source_option(default: str) -> Callable[[F], F]:
    return click.option(
        "--from",
        "source",
        default=default,
        show_default=True,
        help="Snapshot directory (upstream paths plus snapshot.json), the upstream GitHub "
        f"repository URL to fetch from, or 'live' for {DEFAULT_SOURCE}.",
    )


cache_option = click.option(
    "--cache",
    type=click.Path(path_type=Path),
    default=DEFAULT_CACHE,
    show_default=True,
    envvar="ENERGY_INDEX_CACHE",
    show_envvar=True,
    help="Where a fetched snapshot is kept, so that the next fetch is conditional.",
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
out_option = click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Index file to write; its build report goes beside it as <name>.report.json.",
)


@click.group(epilog=EXIT_CODES, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="energy-index")
def main() -> None:
    """Rebuild the energy-per-output-token index of LLMs from the ML.ENERGY Leaderboard.

    Each row is, for one model on one GPU type, the stable serving configuration with the lowest
    energy per output token whose median inter-token latency stays within a deadline.

    Example:

    \b
        energy-index build            # from the vendored snapshot, offline
        energy-index build --from live
    """


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _snapshot(source: str, network: Network, *, tasks: list[str], cache: Path) -> Path:
    if source == LIVE:
        source = DEFAULT_SOURCE
    if not source.startswith(("https://", "http://")):
        return Path(source)
    _check_url("--from", source)
    from pipeline.io.github import snapshot_source

    with network.downloader() as downloader:
        directory, outcome = snapshot_source(
            source,
            ref=network.ref,
            api_base=network.api_base,
            raw_base=network.raw_base,
            tasks=tasks,
            cache=cache,
            downloader=downloader,
            today=_today(),
        )
    if outcome and not network.quiet:
        state = "changed" if outcome.changed else "unchanged"
        click.echo(
            f"fetched upstream {outcome.commit} into {directory} ({state}, "
            f"{outcome.downloaded} file(s) downloaded)",
            err=True,
        )
    if outcome and outcome.kept:  # not asked for, so said even with --quiet
        click.echo(f"kept from the previous snapshot: {', '.join(outcome.kept)}", err=True)
    return directory


def _check_url(option: str, url: str) -> None:
    """A URL given by the user that the download policy refuses is a usage error (exit 2)."""
    from pipeline.errors import UsageError
    from pipeline.io.http import URL_POLICY, shown_url, url_allowed

    if not url_allowed(url):
        raise UsageError(f"{option} {shown_url(url)}: {URL_POLICY}")


@main.command(epilog=EXIT_CODES)
@click.option(
    "--to", type=click.Path(path_type=Path), required=True, help="Snapshot directory to write."
)
@click.option(
    "--task",
    "tasks",
    multiple=True,
    default=["lm-arena-chat"],
    show_default=True,
    help="Task file to fetch; repeat for several.",
)
@click.option(
    "--repository",
    default=DEFAULT_SOURCE,
    show_default=True,
    help="Upstream GitHub repository URL.",
)
@network_options
@reports_errors
def fetch(to: Path, tasks: tuple[str, ...], repository: str, network: Network) -> None:
    """Download upstream files into a snapshot directory, with checksums and provenance.

    The ref is resolved to a commit and every file is taken from that commit. With a previous
    snapshot in --to, an unchanged commit costs one API request, and each download is
    conditional (ETag / Last-Modified). Written atomically: a failed fetch leaves --to as it
    was. --to must be new, empty, or a snapshot this tool wrote; the tasks it holds are kept.
    GITHUB_TOKEN, when set, is sent to the API only, and never printed.

    Example:

        energy-index fetch --to /tmp/upstream --task lm-arena-chat --task gpqa
    """
    if not repository.startswith(("https://", "http://")):
        raise click.BadParameter(
            "must be a https://github.com/<owner>/<repo> URL", param_hint="--repository"
        )
    _snapshot(repository, network, tasks=list(tasks), cache=to)


class Deadlines(click.ParamType):
    """One deadline, or several separated by commas (a sweep)."""

    name = "MS[,MS…]"

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[float, ...]:
        if isinstance(value, tuple):
            return value
        try:
            deadlines = tuple(float(part) for part in str(value).split(","))
        except ValueError:
            self.fail(
                f"{value!r} is not a number of milliseconds or a comma-separated list", param, ctx
            )
        if any(not (d > 0 and d < float("inf")) for d in deadlines):
            self.fail(f"{value!r}: every deadline must be a positive number", param, ctx)
        return tuple(sorted(set(deadlines)))


@main.command(epilog=EXIT_CODES)
@source_option(VENDORED_SNAPSHOT)
@task_option
@click.option(
    "--itl-deadline-ms",
    "deadlines",
    type=Deadlines(),
    default="500",
    show_default=True,
    help="Median inter-token latency ceiling, inclusive. Several, comma-separated "
    "(50,100,250,500), also write the deadline sweep, deadlines.json, beside the index, which "
    "then uses the largest.",
)
@out_option
@click.option(
    "--retrieved", type=IsoDate(), help="Date the data was retrieved [default: the snapshot's]."
)
@click.option("--updated", type=IsoDate(), help="Date the file is written [default: --retrieved].")
@click.option(
    "--all-tasks",
    is_flag=True,
    help="Build one index per LLM and multimodal task, as tasks/<task>/index.json beside --out "
    "(which is not written).",
)
@click.option("--curves", is_flag=True, help="Also write curves.json (concurrency curves).")
@click.option(
    "--extended",
    is_flag=True,
    help="Also write <name>.extended.json: the index with robustness figures per row "
    "(format 1-extended); the index itself is unchanged.",
)
@click.option(
    "--format",
    "formats",
    type=click.Choice(["csv", "parquet"]),
    multiple=True,
    help="Also write the rows as <name>.csv or <name>.parquet; repeat for both.",
)
@cache_option
@network_options
@reports_errors
def build(
    source: str,
    task: str,
    deadlines: tuple[float, ...],
    out: Path,
    retrieved: str | None,
    updated: str | None,
    all_tasks: bool,
    curves: bool,
    extended: bool,
    formats: tuple[str, ...],
    cache: Path,
    network: Network,
) -> None:
    """Build the index and write it with its build report.

    --from takes a snapshot directory (the default is the vendored one, the input of the
    committed output: offline), or the upstream repository URL ('live'), which is fetched into
    --cache first. Dates not given are kept from the index already at --out when it
    was built from the same input bytes, else taken from the snapshot, so rebuilding unchanged
    input gives the same bytes. Nothing is written unless every stage succeeds. Diffusion tasks
    (energy per image or video) are refused.

    Example:

    \b
        energy-index build
        energy-index build --from live --out /tmp/live/index.json
        energy-index build --from snapshots/ml-energy-leaderboard \\
            --retrieved 2026-09-26 --updated 2026-09-27 --out output/index.json
        energy-index build --from snapshots/ml-energy-leaderboard \\
            --all-tasks --itl-deadline-ms 50,100,250,500 --curves --format csv
    """
    from pipeline.documents.editorial import editorial_text, indexed_tasks
    from pipeline.errors import UsageError
    from pipeline.flows.build import BuildSettings, Extras, report_path, run, run_all_tasks

    task_source = click.get_current_context().get_parameter_source("task")
    if all_tasks and task_source is not click.core.ParameterSource.DEFAULT:
        raise UsageError("--all-tasks builds every task: give it or --task, not both")
    if retrieved and updated and updated < retrieved:
        raise UsageError(f"--updated {updated} is earlier than --retrieved {retrieved}")
    tasks = indexed_tasks(editorial_text()) if all_tasks else [task]
    snapshot = _snapshot(source, network, tasks=tasks, cache=cache)
    settings = BuildSettings(
        task=task, itl_deadline_ms=max(deadlines), retrieved=retrieved, updated=updated
    )
    extras = Extras(
        sweep_deadlines_ms=deadlines if len(deadlines) > 1 else (),
        curves=curves,
        extended=extended,
        formats=formats,
    )
    if all_tasks:
        results = run_all_tasks(
            snapshot, out_dir=out.parent / "tasks", settings=settings, extras=extras
        )
        for name, result in results.items():
            rows = len(result.document["rows"])
            click.echo(f"wrote {out.parent / 'tasks' / name / 'index.json'} ({rows} rows)")
        return
    result = run(snapshot, out=out, settings=settings, extras=extras)
    counts = result.report["counts"]
    click.echo(
        f"wrote {out} ({counts['rows']} rows from {counts['stable']} stable of "
        f"{counts['configurations']} configurations) and {report_path(out)}"
    )


@main.command(epilog=EXIT_CODES)
@source_option(LIVE)
@task_option
@deadline_option
@out_option
@click.option(
    "--exit-code",
    is_flag=True,
    help=f"Exit {CHANGED_EXIT_CODE} when the index changed, so a scheduler can tell.",
)
@click.option(
    "--date", "today", type=IsoDate(), help="Date to stamp a change with [default: today, UTC]."
)
@click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    help="Seconds to wait for another regeneration of the same --out to finish.",
)
@click.option(
    "--snapshot",
    "vendored",
    type=click.Path(path_type=Path),
    default=Path(VENDORED_SNAPSHOT),
    show_default=True,
    help="The vendored snapshot to keep as the input of --out: replaced by the fetched one when "
    "upstream's files changed (created if missing), and the index is built from it.",
)
@cache_option
@network_options
@reports_errors
def regenerate(
    source: str,
    task: str,
    itl_deadline_ms: float,
    out: Path,
    exit_code: bool,
    today: str | None,
    lock_timeout: float,
    vendored: Path,
    cache: Path,
    network: Network,
) -> None:
    """Fetch, rebuild, and replace the index only if its data changed.

    Unchanged (same rows and non-volatile header): the file keeps its bytes and dates, and this
    prints "unchanged (upstream <commit>)". Changed: the index is written with updated = today
    (and data_version = today if rows changed), the changelog is printed, appended to
    CHANGELOG.md beside the index, and written as <name>.changelog.json. Two regenerations of
    the same --out never interleave: the second waits for the first (see --lock-timeout).

    The index is built from --snapshot, the vendored copy of upstream kept beside it: when
    upstream's files changed, the fetched snapshot replaces it whole first (after a build from
    the fetched files succeeded), so the repository always holds exactly the input of its
    output. A refused build replaces nothing.

    Example:

    \b
        energy-index regenerate --exit-code; [ $? -eq 10 ] && echo "index changed"
    """
    from pipeline.flows.build import (
        BuildSettings,
        regeneration_lock,
        regeneration_paths,
        staged_or_errors_file,
    )
    from pipeline.flows.build import regenerate as regenerated
    from pipeline.io.files import checked_targets
    from pipeline.io.vendored import refreshed_snapshot, snapshot_tasks

    checked_targets(regeneration_paths(out))  # before the lock file is made beside it
    settings = BuildSettings(task=task, itl_deadline_ms=itl_deadline_ms)
    with regeneration_lock(out, wait_seconds=lock_timeout):
        tasks = sorted({task, *snapshot_tasks(vendored)})  # refresh every task it holds
        fetched = _snapshot(source, network, tasks=tasks, cache=cache)
        # Built from the fetched files first: a refused build must replace nothing.
        upstream = staged_or_errors_file(fetched, out=out, settings=settings).snapshot.commit
        replaced = refreshed_snapshot(fetched, vendored=vendored, task=task)
        outcome = regenerated(vendored, out=out, settings=settings, today=today or _today())
    snapshot_line = f"  vendored snapshot {vendored}: replaced by upstream {upstream}"
    if outcome.changelog is None:
        click.echo(f"unchanged (upstream {upstream})")
        if replaced:
            click.echo(snapshot_line)
        return
    click.echo(f"changed (upstream {upstream}): wrote {out}")
    for line in outcome.changelog.lines():
        click.echo(f"  {line}")
    if replaced:
        click.echo(snapshot_line)
    if exit_code:
        sys.exit(CHANGED_EXIT_CODE)


@main.command(epilog=EXIT_CODES)
@click.option(
    "--published",
    required=True,
    help="The published index to check: a file, or an https:// URL where it is served.",
)
@source_option(VENDORED_SNAPSHOT)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@cache_option
@network_options
@reports_errors
def audit(published: str, source: str, as_json: bool, cache: Path, network: Network) -> None:
    """Rebuild the index in memory and compare it with a published copy.

    Rows are matched by row_id and compared field by field; header keys too. The dates updated,
    data_version and source.retrieved are volatile: shown, never failing. The rebuild uses the
    published file's task and deadline. Exit 0 only when nothing else differs.

    Example:

    \b
        energy-index audit --published output/index.json
        energy-index audit --published fixtures/published/index.json --json
    """
    from pipeline.documents.compare import audit as compare
    from pipeline.flows.build import BuildSettings, build

    document = _published(published, network)
    _refuse_invalid(published, document)
    task = _task_of(document)
    settings = BuildSettings(task=task, itl_deadline_ms=float(document.get("itl_deadline_ms", 500)))
    snapshot = _snapshot(source, network, tasks=[task], cache=cache)
    result = compare(document, build(snapshot, settings=settings).document)
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
    else:
        for line in result.lines():
            click.echo(line)
    sys.exit(0 if result.identical else 1)


index_option = click.option(
    "--index",
    type=click.Path(path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="The index to document; its build report <name>.report.json must sit beside it.",
)


@main.command(epilog=EXIT_CODES)
@index_option
@source_option(VENDORED_SNAPSHOT)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("output/report.html"),
    show_default=True,
    help="The page to write.",
)
@click.option(
    "--png",
    type=click.Path(path_type=Path),
    help="Also render the page's charts to this PNG (vl-convert), e.g. docs/report.png.",
)
@cache_option
@network_options
@reports_errors
def report(
    index: Path, source: str, out: Path, png: Path | None, cache: Path, network: Network
) -> None:
    """Write one self-contained, interactive HTML page documenting an index.

    Figures, dates and sha256 come from --index and its build report, which must agree; the
    stable configurations come from --from, the snapshot the report names (its input sha256 is
    checked). The page has the index as a table, a deadline slider (10–500 ms) that re-picks
    every model and GPU in the browser with the index's rule, GPU and model filters, the picks
    and the energy-vs-latency curves as Vega-Lite charts with tooltips, the deadline sweep, the
    runs left out, and the provenance. It makes no network request.

    Example:

        energy-index report --index output/index.json --out output/report.html
    """
    from pipeline.flows.report import index_beside, page_inputs
    from pipeline.io.files import checked_targets, write_files
    from pipeline.pages.page import report_html

    checked_targets({"report page": out, **({"charts picture": png} if png else {})})
    task = index_beside(index).report["parameters"]["task"]
    snapshot = _snapshot(source, network, tasks=[task], cache=cache)
    inputs = page_inputs(index, snapshot)
    page = report_html(inputs).encode("utf-8")
    files = {out: page}
    if png is not None:
        from pipeline.pages.picture import charts_png

        files[png] = charts_png(inputs)
    write_files(files)
    click.echo(f"wrote {out} ({len(page) >> 10} KiB)" + (f" and {png}" if png else ""))


@main.command(epilog=EXIT_CODES)
@index_option
@source_option(VENDORED_SNAPSHOT)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("site"),
    show_default=True,
    help="The site directory, replaced whole.",
)
@cache_option
@network_options
@reports_errors
def site(index: Path, source: str, out: Path, cache: Path, network: Network) -> None:
    """Write the static site: every task's report page and a JSON API with a Data Package.

    index.html is the report of --index; tasks/<task>/index.html one per task;
    api/v1/tasks/<task>/{index,deadlines}.json and index.csv; api/v1/models/<slug>.json every
    GPU's row and curve of a model; datapackage.json describes the tables and the licence.
    Each JSON file is schema-checked; the directory is replaced only once all are written.

    Example:

        energy-index site --index output/index.json --out site
    """
    from pipeline.documents.editorial import editorial_text, indexed_tasks
    from pipeline.flows.site import site_files
    from pipeline.io.files import write_directory

    snapshot = _snapshot(source, network, tasks=indexed_tasks(editorial_text()), cache=cache)
    files = site_files(index, snapshot)
    write_directory(out, files)
    click.echo(f"wrote {out}/ ({len(files)} files, {sum(map(len, files.values())) >> 10} KiB)")


@main.command(epilog=EXIT_CODES)
@click.argument("path", type=click.Path(path_type=Path))
@reports_errors
def validate(path: Path) -> None:
    """Check an index file against schemas/index.schema.json and the rules a schema cannot
    state: row_id unique, one row per model and GPU, rows in the documented order, the
    reference row among them, dates real and in order. audit and regenerate check the same.

    Example:

        energy-index validate output/index.json
    """
    from pipeline.documents.invariants import index_problems

    problems = index_problems(_read_index(path))
    for problem in problems:
        click.echo(f"{path}: {problem}", err=True)
    if problems:
        sys.exit(1)
    click.echo(f"{path}: valid against schemas/index.schema.json and the index rules")


def _refuse_invalid(location: str, document: dict[str, Any]) -> None:
    """A published document that is not a valid index is refused before any comparison: a
    comparison by row_id would pass duplicates and rows that are not rows."""
    from pipeline.documents.invariants import index_problems
    from pipeline.errors import SourceError

    problems = index_problems(document)
    if problems:
        listed = "".join(f"\n  {problem}" for problem in problems[:20])
        more = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise SourceError(
            f"{location}: not a valid index ({len(problems)} problem(s)):{listed}{more}"
        )


def _published(location: str, network: Network) -> dict[str, Any]:
    if not location.startswith(("https://", "http://")):
        return _read_index(Path(location))
    _check_url("--published", location)
    with network.downloader() as downloader:
        document: dict[str, Any] = downloader.get_json(location, expect=dict)
    return document


def _read_index(path: Path) -> dict[str, Any]:
    from pipeline.errors import SourceError
    from pipeline.io.local import json_value, local_bytes

    document = json_value(local_bytes(path), path=path)
    if not isinstance(document, dict):
        raise SourceError(f"{path}: expected a JSON object (an index), got something else")
    return document


def _task_of(document: dict[str, Any]) -> str:
    data_url = str(document.get("source", {}).get("data_url", ""))
    name = data_url.rsplit("/", 1)[-1]
    return name.removesuffix(".json") if name.endswith(".json") else "lm-arena-chat"
