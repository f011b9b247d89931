"""The ``energy-index`` command line.

Heavy libraries (polars, pandera, httpx, jsonschema) are imported inside the commands, so that
``--help`` answers at once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from energy_index import __version__
from energy_index.model import (
    ITL_STATISTICS,
    NetworkSettings,
    is_day,
    json_number,
)
from energy_index.settings import (
    CARBON_SNAPSHOT,
    DEFAULT_CACHE,
    DEFAULT_ITL_DEADLINE_MS,
    DEFAULT_ITL_STATISTIC,
    DEFAULT_OUT,
    DEFAULT_REPORT_PAGE,
    DEFAULT_SITE,
    DEFAULT_TASK,
    LIVE,
    LOCK_TIMEOUT_SECONDS,
    TABLE_FORMATS,
    UPSTREAM_URL,
    VENDORED_SNAPSHOT,
)

if TYPE_CHECKING:
    pass

OFFLINE_HINT = (
    "hint: to build without network, leave out --from (the vendored snapshot: the checkout's, "
    "else the copy installed with energy-index) or pass a snapshot directory: --from DIR "
    "(make index FROM=DIR)"
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


class IsoDate(click.ParamType):  # type: ignore[type-arg]
    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        if is_day(value):
            return str(value)
        self.fail(f"{value!r} is not a date YYYY-MM-DD", param, ctx)


def reports_errors(command: F) -> F:
    """Turn the pipeline's own errors into a message on stderr and their exit code."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from energy_index.errors import EnergyIndexError, NetworkError

        try:
            return command(*args, **kwargs)
        except EnergyIndexError as error:
            flag = _flag(error.parameter)
            click.echo(f"error: {flag}{_scrubbed(str(error))}", err=True)
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


def _flag(parameter: str | None) -> str:
    """``--task: `` for the parameter ``task`` of the running command: the library's errors speak
    of values and name the keyword argument; the command line names its option."""
    context = click.get_current_context(silent=True)
    if parameter is None or context is None:
        return ""
    for param in context.command.params:
        flag = "--" + parameter.replace("_", "-")
        if isinstance(param, click.Option) and (param.name == parameter or flag in param.opts):
            return f"{max(param.opts, key=len)}: "
    return ""


def _scrubbed(message: str) -> str:
    from energy_index.errors import scrubbed

    return scrubbed(message, os.environ.get("GITHUB_TOKEN"))


def _network_option(setting: dataclasses.Field[Any]) -> Callable[[F], F]:
    """The option of one network setting, as its field in model.NetworkSettings describes it."""
    spec, default = setting.metadata["option"], setting.default
    flag = "--" + setting.name.replace("_", "-")
    if isinstance(default, bool):
        return click.option(flag, is_flag=True, help=spec["help"])
    if default is None:
        return click.option(flag, help=spec["help"])
    kind: Any = None
    if isinstance(default, int):
        kind = click.IntRange(min=spec["min"], min_open=spec["min_open"])
    elif isinstance(default, float):
        kind = click.FloatRange(min=spec["min"], min_open=spec["min_open"])
    envvar = f"ENERGY_INDEX_{setting.name.upper()}" if spec["envvar"] else None
    return click.option(
        flag, type=kind, default=default, show_default=True, envvar=envvar,
        show_envvar=envvar is not None, help=spec["help"],
    )  # fmt: skip


# The network settings the command line offers: those whose field says how.
_NETWORK_SETTINGS = tuple(f for f in dataclasses.fields(NetworkSettings) if "option" in f.metadata)


FORCE_OPTION = click.option(
    "--force", is_flag=True, help="Overwrite files of the folder that were changed by hand."
)
REPLACE_OPTION = click.option(
    "--force",
    is_flag=True,
    help="Replace a file at an output path that energy-index did not write (by default such a "
    "file, yours, stops the command before anything is written: exit 2, naming it).",
)


def network_options(command: F) -> F:
    """Add the network options to a command and hand them to it as one ``network`` value."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        network = NetworkSettings(**{f.name: kwargs.pop(f.name) for f in _NETWORK_SETTINGS})
        return command(*args, network=network, **kwargs)

    for setting in reversed(_NETWORK_SETTINGS):
        wrapper = _network_option(setting)(wrapper)
    return wrapper  # type: ignore[return-value]


INSTALLED_COPY = (
    "; by default the path of that name in the working directory (a checkout), else the "
    "copy installed with energy-index"
)


def source_option(default: str) -> Callable[[F], F]:
    vendored = f" ({default}{INSTALLED_COPY}: the input of the published index)"
    return click.option(
        "--from",
        "source",
        default=default,
        show_default=True,
        help="Snapshot directory (upstream paths plus snapshot.json), the upstream GitHub "
        f"repository URL to fetch from, or '{LIVE}' for {UPSTREAM_URL}"
        + (vendored if default == VENDORED_SNAPSHOT else "")
        + ".",
    )


carbon_option = click.option(
    "--carbon",
    type=click.Path(path_type=Path),
    default=Path(CARBON_SNAPSHOT),
    show_default=True,
    help="The grid carbon intensity snapshot (CodeCarbon's energy mix, vendored like the "
    f"leaderboard's) that impacts are built from{INSTALLED_COPY}.",
)
cache_option = click.option(
    "--cache",
    type=click.Path(path_type=Path),
    default=Path(DEFAULT_CACHE),
    show_default=True,
    envvar="ENERGY_INDEX_CACHE",
    show_envvar=True,
    help="Where a fetched snapshot is kept, so that the next fetch is conditional.",
)
task_option = click.option(
    "--task", default=DEFAULT_TASK, show_default=True, help="Upstream task to index."
)


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    # NaN passes every range comparison, and no configuration is measured at infinity.
    if not math.isfinite(value):
        raise click.BadParameter(f"{value!r} is not a finite number of milliseconds")
    return value


deadline_option = click.option(
    "--itl-deadline-ms",
    type=click.FloatRange(min=0, min_open=True),
    callback=_finite,
    default=DEFAULT_ITL_DEADLINE_MS,
    show_default=True,
    help="Median inter-token latency ceiling, inclusive.",
)


itl_statistic_option = click.option(
    "--itl-statistic",
    type=click.Choice(list(ITL_STATISTICS)),
    default=DEFAULT_ITL_STATISTIC,
    show_default=True,
    help="Which inter-token latency statistic the deadline applies to: the median (the "
    "leaderboard's own rule, the published index) or a tail percentile. The index's selection "
    "text and the build report name it.",
)


def _file_path(ctx: click.Context, param: click.Parameter, value: str | Path | None) -> Path | None:
    """A path that must name a file: one typed with a trailing '/' names a directory (Path
    would drop the slash). The default arrives as a Path already."""
    if isinstance(value, str) and value.endswith(("/", os.sep)):
        raise click.BadParameter(f"{value!r} names a directory; name a file in it")
    return None if value is None else Path(value)


out_option = click.option(
    "--out",
    type=click.Path(),
    callback=_file_path,
    default=Path(DEFAULT_OUT),
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


def _notify(line: str) -> None:
    """Progress of a flow (what was fetched, what was kept): on stderr, as it happens."""
    click.echo(line, err=True)


@main.command(epilog=EXIT_CODES, short_help="Download upstream into a snapshot directory.")
@click.option(
    "--to", type=click.Path(path_type=Path), required=True, help="Snapshot directory to write."
)
@click.option(
    "--task",
    "tasks",
    multiple=True,
    default=[DEFAULT_TASK],
    show_default=True,
    help="Task file to fetch; repeat for several.",
)
@click.option(
    "--repository",
    default=UPSTREAM_URL,
    show_default=True,
    help="Upstream GitHub repository URL.",
)
@FORCE_OPTION
@network_options
@reports_errors
def fetch(
    to: Path, tasks: tuple[str, ...], repository: str, force: bool, network: NetworkSettings
) -> None:
    """Download upstream files into a snapshot directory, with checksums and provenance.

    The ref is resolved to a commit and every file is taken from that commit. With a previous
    snapshot in --to, an unchanged commit costs one API request, and each download is
    conditional (ETag / Last-Modified). Written atomically: a failed fetch leaves --to as it
    was. --to must be new, empty, or a snapshot this tool wrote; the tasks it holds are kept,
    and a file of it changed by hand stops the fetch (exit 2, naming it) unless --force.
    GITHUB_TOKEN, when set, is sent to the API only, and never printed.

    Example:

        energy-index fetch --to /tmp/upstream --task lm-arena-chat --task gpqa
    """
    from energy_index import api

    api.fetch(
        to=to, tasks=tasks, repository=repository, network=network, notify=_notify, force=force
    )


class Deadlines(click.ParamType):  # type: ignore[type-arg]
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
    type=Deadlines(),
    default=str(json_number(DEFAULT_ITL_DEADLINE_MS)),
    show_default=True,
    help="Median inter-token latency ceiling, inclusive. Several, comma-separated "
    "(50,100,250,500), also write the deadline sweep, deadlines.json, beside the index, which "
    "then uses the largest.",
)
@itl_statistic_option
@out_option
@click.option(
    "--retrieved",
    type=IsoDate(),
    help="Date the data was retrieved [default: the one --from's snapshot.json records for its "
    "index (index_dates), else the snapshot's retrieval date].",
)
@click.option(
    "--updated",
    type=IsoDate(),
    help="Date the file is written [default: the one --from's snapshot.json records for its "
    "index (index_dates), else --retrieved].",
)
@click.option(
    "--all-tasks",
    is_flag=True,
    help="Build one index per LLM and multimodal task, as tasks/<task>/index.json beside --out "
    "(which is not written).",
)
@click.option("--curves", is_flag=True, help="Also write curves.json (concurrency curves).")
@click.option(
    "--profiles",
    is_flag=True,
    help="Also write profiles.json, the latency profiles: per model and GPU, the pick under "
    "each ITL statistic (median, p90, p95, p99) at each deadline of 5, 10, 20, 50, 100, 200, "
    "500 ms and every --itl-deadline-ms, its energy penalty, and whether the deadline binds "
    "(with --format, also profiles.csv or profiles.parquet).",
)
@click.option(
    "--responses",
    is_flag=True,
    help="Also write responses.json: per pick, Wh per response at the 10th, 50th, 90th and "
    "99th percentile of its output-length distribution and at its mean, from upstream's "
    "per-model files (a snapshot without them: each pick says it was skipped, and why).",
)
@click.option(
    "--extended",
    is_flag=True,
    help="Also write <name>.extended.json: the index with robustness figures per row "
    "(format 1-extended); the index itself is unchanged.",
)
@click.option(
    "--format",
    "formats",
    type=click.Choice(TABLE_FORMATS),
    multiple=True,
    help="Also write the rows as <name>.csv or <name>.parquet; repeat for both.",
)
@click.option(
    "--impacts",
    is_flag=True,
    help="Also write impacts.json (and impacts.csv/.parquet with --format): per row the measured "
    "GPU energy beside estimated server and facility energy and carbon by country, as ranges "
    "from cited factors and the carbon snapshot (--carbon). The index itself is unchanged.",
)
@carbon_option
@cache_option
@REPLACE_OPTION
@network_options
@reports_errors
def build(
    source: str,
    task: str,
    itl_deadline_ms: tuple[float, ...],
    itl_statistic: str,
    out: Path,
    retrieved: str | None,
    updated: str | None,
    all_tasks: bool,
    curves: bool,
    profiles: bool,
    responses: bool,
    extended: bool,
    formats: tuple[str, ...],
    impacts: bool,
    carbon: Path,
    cache: Path,
    force: bool,
    network: NetworkSettings,
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
    from energy_index import api
    from energy_index.errors import UsageError

    task_source = click.get_current_context().get_parameter_source("task")
    if all_tasks and task_source is not click.core.ParameterSource.DEFAULT:
        raise UsageError("--all-tasks builds every task: give it or --task, not both")
    if retrieved and updated and updated < retrieved:
        raise UsageError(f"--updated {updated} is earlier than --retrieved {retrieved}")
    built = api.build(
        source=source,
        task=task,
        itl_deadline_ms=itl_deadline_ms,
        itl_statistic=itl_statistic,
        out=out,
        retrieved=retrieved,
        updated=updated,
        all_tasks=all_tasks,
        curves=curves,
        profiles=profiles,
        extended=extended,
        formats=formats,
        impacts=impacts,
        carbon=carbon,
        responses=responses,
        cache=cache,
        network=network,
        notify=_notify,
        force=force,
    )
    if all_tasks:
        for result in built.tasks.values():
            rows = len(result.document["rows"])
            click.echo(f"wrote {result.files[0]} ({rows} rows){_and_beside(result.files)}")
        return
    counts = built.report["counts"]
    click.echo(
        f"wrote {built.files[0]} ({counts['rows']} rows from {counts['stable']} stable of "
        f"{counts['configurations']} configurations){_and_beside(built.files)}"
    )


def _and_beside(files: tuple[Path, ...]) -> str:
    """The files a build wrote beside its index (``files[0]``), for its ``wrote`` line."""
    rest = [str(path) for path in files[1:]]
    if len(rest) < 2:
        return "".join(f" and {path}" for path in rest)
    return f", {', '.join(rest[:-1])} and {rest[-1]}"


@main.command(epilog=EXIT_CODES, short_help="Fetch, rebuild; replace the index if changed.")
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
    default=LOCK_TIMEOUT_SECONDS,
    show_default=True,
    help="Seconds to wait for another regeneration of the same --out to finish.",
)
@click.option(
    "--snapshot",
    "vendored",
    type=click.Path(path_type=Path),
    default=None,
    help="The vendored snapshot to keep as the input of --out: replaced by the fetched one, "
    "together with the index, when upstream's files changed (created if missing). [default: "
    f"{VENDORED_SNAPSHOT} when --out is {DEFAULT_OUT}; with another --out, none is kept]",
)
@cache_option
@REPLACE_OPTION
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
    vendored: Path | None,
    cache: Path,
    force: bool,
    network: NetworkSettings,
) -> None:
    """Fetch, rebuild, and replace the index only if its data changed.

    Unchanged (same rows and non-volatile header): the file keeps its bytes and dates, and this
    prints "unchanged (upstream <commit>)". Changed: the index is written with updated = today
    (and data_version = today if rows changed), the changelog is printed, appended to
    CHANGELOG.md beside the index, and written as <name>.changelog.json. Two regenerations of
    the same --out never interleave: the second waits for the first (see --lock-timeout).

    The index is built from --snapshot, the vendored copy of upstream kept as its input: when
    upstream's files changed, the fetched snapshot replaces it together with the index, its
    build report and the changelogs, all or nothing (a change in files the index does not read
    still replaces the snapshot and the report, with a changelog line). The vendored
    snapshot.json records the index's dates, so a build of it in an empty folder gives the
    index's bytes. A refused build, or any failure, replaces nothing.

    Example:

    \b
        energy-index regenerate --exit-code; [ $? -eq 10 ] && echo "index changed"
    """
    from energy_index import api

    outcome = api.regenerate(
        source=source,
        task=task,
        itl_deadline_ms=itl_deadline_ms,
        out=out,
        today=today,
        lock_timeout=lock_timeout,
        vendored=vendored,
        cache=cache,
        network=network,
        notify=_notify,
        force=force,
    )
    upstream = outcome.upstream
    if outcome.changelog is None:
        click.echo(f"unchanged (upstream {upstream})")
    else:
        click.echo(f"changed (upstream {upstream}): wrote {out}")
        for line in outcome.changelog.lines():
            click.echo(f"  {line}")
    if outcome.snapshot_replaced:
        click.echo(f"  vendored snapshot {outcome.vendored}: replaced by upstream {upstream}")
    if outcome.changelog is not None and exit_code:
        sys.exit(CHANGED_EXIT_CODE)


@main.command(
    "refresh-carbon", epilog=EXIT_CODES, short_help="Refresh the vendored grid carbon snapshot."
)
@click.option(
    "--snapshot",
    type=click.Path(path_type=Path),
    default=Path(CARBON_SNAPSHOT),
    show_default=True,
    help="The vendored carbon snapshot, replaced whole when upstream's file changed.",
)
@click.option(
    "--changelog-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Where carbon.changelog.json and the CHANGELOG.md entry go [default: the folder of "
    f"{DEFAULT_OUT}].",
)
@click.option(
    "--exit-code",
    is_flag=True,
    help=f"Exit {CHANGED_EXIT_CODE} when the snapshot changed, so a scheduler can tell.",
)
@click.option(
    "--date", "today", type=IsoDate(), help="Date to stamp a change with [default: today, UTC]."
)
@cache_option
@REPLACE_OPTION
@network_options
@reports_errors
def refresh_carbon(
    snapshot: Path,
    changelog_dir: Path | None,
    exit_code: bool,
    today: str | None,
    cache: Path,
    force: bool,
    network: NetworkSettings,
) -> None:
    """Fetch the grid carbon intensities (mlco2/codecarbon, global_energy_mix.json) and replace
    the vendored carbon snapshot only if their bytes changed.

    Every country is checked before anything is written. Unchanged: nothing is written and this
    prints "unchanged (upstream <commit>)". Changed: carbon.changelog.json (countries added,
    removed, and each intensity or year that moved) and an entry in CHANGELOG.md go to
    --changelog-dir, then the snapshot is replaced whole. Rebuild the impacts (build --impacts,
    site) after it; the index itself does not read it.

    Example:

    \b
        energy-index refresh-carbon --exit-code; [ $? -eq 10 ] && make site
    """
    from energy_index import api

    outcome = api.refresh_carbon(
        snapshot=snapshot,
        out_dir=changelog_dir,
        today=today,
        cache=cache,
        network=network,
        notify=_notify,
        force=force,
    )
    if outcome.changelog is None:
        click.echo(f"unchanged (upstream {outcome.commit})")
        return
    click.echo(f"changed (upstream {outcome.commit}): replaced {snapshot}")
    click.echo(outcome.changelog["markdown"].rstrip())
    if exit_code:
        sys.exit(CHANGED_EXIT_CODE)


@main.command(epilog=EXIT_CODES, short_help="Compare a published copy with a rebuild.")
@click.option(
    "--published",
    default=DEFAULT_OUT,
    show_default=True,
    help="The published index (or impacts.json) to check: a file, or an https:// URL where it "
    f"is served ({DEFAULT_OUT}{INSTALLED_COPY}: the published index).",
)
@click.option(
    "--from",
    "source",
    help="Rebuild from this snapshot directory, upstream URL or 'live' [default: the vendored "
    f"snapshot ({VENDORED_SNAPSHOT}{INSTALLED_COPY}) when the published file records its dates, "
    "else the upstream commit current at the published source.retrieved].",
)
@click.option(
    "--at",
    help="Rebuild from this upstream commit instead of the one the published file's dates "
    "point to: offline from the vendored snapshot or --cache when one is at that commit, else "
    "fetched. 40 hex digits, or the first 7 or more of a snapshot's on disk.",
)
@carbon_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document on stdout whatever the outcome: its 'outcome' is identical, "
    "differs, not an index, cannot fetch or error (the message in 'error').",
)
@cache_option
@network_options
@reports_errors
def audit(
    published: str,
    source: str | None,
    at: str | None,
    carbon: Path,
    as_json: bool,
    cache: Path,
    network: NetworkSettings,
) -> None:
    """Rebuild the index in memory and compare it with a published copy.

    Rows are matched by row_id and compared field by field; header keys too. The dates updated,
    data_version and source.retrieved are volatile: shown, never failing. The rebuild uses the
    published file's task, deadline and latency statistic (the one its selection text names).
    Exit 0 only when nothing else differs. The first line says what was compared with what:
    without --from or --at, the vendored snapshot when the published file records its dates
    (offline), else upstream at the commit that was current on the published file's
    source.retrieved date (GitHub's commits API), so that upstream's later changes are not taken
    for tampering.

    An impacts.json (build --impacts) is compared path by path with impacts rebuilt from the
    index rebuilt from --from, the cited factors and the carbon snapshot --carbon; its 'index'
    block (the published index's sha256 and dates) is volatile.

    Example:

    \b
        energy-index audit              # the published index this copy carries, offline
        energy-index audit --published index.json --json
        energy-index audit --published https://example.org/index.json \\
            --at 0cd52dab897c5d91a45f4d413038f3b8b4251b0f
        energy-index audit --published site/api/v1/tasks/gpqa/impacts.json
    """
    from energy_index import api
    from energy_index.errors import EnergyIndexError, failed_audit, printable_json

    try:
        result = api.audit(
            published=published,
            source=source,
            at=at,
            carbon=carbon,
            cache=cache,
            network=network,
            notify=_notify,
        )
    except EnergyIndexError as error:
        if as_json:  # a scheduled audit reads a verdict on stdout; the message goes on stderr
            verdict = failed_audit(error, message=_flag(error.parameter) + _scrubbed(str(error)))
            click.echo(printable_json(verdict))
        raise
    if as_json:
        click.echo(printable_json(result.as_json()))
    else:
        for line in [result.basis, *result.lines()]:
            click.echo(line)
    sys.exit(0 if result.identical else 1)


index_option = click.option(
    "--index",
    type=click.Path(path_type=Path),
    default=Path(DEFAULT_OUT),
    show_default=True,
    help="The index to document; its build report <name>.report.json must sit beside it "
    f"({DEFAULT_OUT}{INSTALLED_COPY}: the published index).",
)


@main.command(epilog=EXIT_CODES, short_help="Write the interactive HTML report page.")
@index_option
@source_option(VENDORED_SNAPSHOT)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path(DEFAULT_REPORT_PAGE),
    show_default=True,
    help="The page to write.",
)
@click.option(
    "--png",
    type=click.Path(path_type=Path),
    help="Also render the page's charts to this PNG, e.g. docs/report.png. Needs the optional "
    "extra vl-convert-python: pip install 'energy-index[png]'.",
)
@carbon_option
@cache_option
@REPLACE_OPTION
@network_options
@reports_errors
def report(
    index: Path,
    source: str,
    out: Path,
    png: Path | None,
    carbon: Path,
    cache: Path,
    force: bool,
    network: NetworkSettings,
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
    from energy_index import api

    page = api.report(
        index=index,
        source=source,
        out=out,
        png=png,
        carbon=carbon,
        cache=cache,
        network=network,
        notify=_notify,
        force=force,
    )
    click.echo(f"wrote {page.path} ({page.size >> 10} KiB)" + (f" and {png}" if png else ""))


# site takes report's inputs (the index, and the snapshot its build report names); only what it
# writes differs.
@main.command(epilog=EXIT_CODES, short_help="Write the static site and its JSON API.")
@index_option
@source_option(VENDORED_SNAPSHOT)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path(DEFAULT_SITE),
    show_default=True,
    help="The site directory, replaced whole.",
)
@carbon_option
@cache_option
@FORCE_OPTION
@network_options
@reports_errors
def site(
    index: Path,
    source: str,
    out: Path,
    carbon: Path,
    cache: Path,
    force: bool,
    network: NetworkSettings,
) -> None:
    """Write the static site: every task's report page and a JSON API with a Data Package.

    index.html is the report of --index; tasks/<task>/index.html one per task;
    api/v1/tasks/<task>/{index,deadlines}.json and index.csv; api/v1/models/<slug>.json every
    GPU's row and curve of a model; datapackage.json describes the tables and the licence.
    api/v1/tasks/<task>/impacts.json (and impacts.csv) holds the measured GPU energy beside
    estimated server, facility and carbon ranges; api/v1/tasks/<task>/impacts/<ISO3>.json one
    country's carbon (grid intensities from --carbon); cards/<task>/<model>/<gpu>.html one card
    per pick.
    Each JSON file is schema-checked; the directory is replaced only once all are written. A
    file of the previous site changed by hand (its sha256 is not the one files.json records)
    stops the run (exit 2, naming it) unless --force.

    Example:

        energy-index site --index output/index.json --out site
    """
    from energy_index import api

    written = api.site(
        index=index,
        source=source,
        out=out,
        carbon=carbon,
        cache=cache,
        network=network,
        notify=_notify,
        force=force,
    )
    files = written.files
    click.echo(f"wrote {out}/ ({len(files)} files, {sum(map(len, files.values())) >> 10} KiB)")


@main.command(epilog=EXIT_CODES, short_help="Energy at your load: replicas and their energy.")
@click.option(
    "--tokens-per-second",
    type=float,
    help="The total load, in output tokens per second (or give --requests-per-second).",
)
@click.option(
    "--requests-per-second",
    type=float,
    help="The total load in requests per second, × --output-tokens-per-request.",
)
@click.option(
    "--output-tokens-per-request",
    type=float,
    help="Output tokens per request [default: each family's measured mean output length].",
)
@deadline_option
@itl_statistic_option
@click.option("--model", help="Only this model (nickname or model id, any case).")
@click.option("--gpu", help="Only this GPU type (e.g. B200).")
@click.option(
    "--country",
    "countries",
    multiple=True,
    help="Estimated carbon for this country (ISO 3166-1 alpha-3, e.g. FRA); repeat for several "
    "[default: every country of --carbon, in --json and --csv only].",
)
@task_option
@source_option(VENDORED_SNAPSHOT)
@carbon_option
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the plan and its alternative as CSV.")
@cache_option
@network_options
@reports_errors
def plan(
    tokens_per_second: float | None,
    requests_per_second: float | None,
    output_tokens_per_request: float | None,
    itl_deadline_ms: float,
    itl_statistic: str,
    model: str | None,
    gpu: str | None,
    countries: tuple[str, ...],
    task: str,
    source: str,
    carbon: Path,
    as_json: bool,
    as_csv: bool,
    cache: Path,
    network: NetworkSettings,
) -> None:
    """The replicas that carry a load with the least power, and their energy, read from the
    measured curves: not the index's saturation floor, the energy at your load.

    For each model, GPU type and GPU count, the stable configurations that meet the latency
    target are ordered by throughput; a load per replica that falls between two of them takes
    their power range (bracketed), one below the lightest gets an upper bound only (idle power
    is not measured). The replica count with the lowest upper bound of total power is chosen;
    the best family is printed with the configurations it was read from, and the runner-up as
    the alternative. Facility energy and carbon (--country) are estimates from the impacts'
    cited factors, kept apart. The method and what is not measured head the output
    (docs/plan.md).

    Example:

    \b
        energy-index plan --model "Qwen 3 14B" --gpu B200 --tokens-per-second 2000
        energy-index plan --requests-per-second 50 --itl-statistic p99 --itl-deadline-ms 100
        energy-index plan --tokens-per-second 1e5 --country FRA --json
    """
    from energy_index import api
    from energy_index.errors import UsageError

    if as_json and as_csv:
        raise UsageError("--json and --csv: give one of them")
    result = api.plan(
        tokens_per_second=tokens_per_second,
        requests_per_second=requests_per_second,
        output_tokens_per_request=output_tokens_per_request,
        itl_deadline_ms=itl_deadline_ms,
        itl_statistic=itl_statistic,
        model=model,
        gpu=gpu,
        countries=countries,
        task=task,
        source=source,
        carbon=carbon,
        cache=cache,
        network=network,
        notify=_notify,
    )
    if as_json:
        from energy_index.errors import printable_json

        click.echo(printable_json(result.as_json()))
    elif as_csv:
        click.echo(result.csv().decode("utf-8"), nl=False)
    else:
        for line in result.lines():
            click.echo(line)


@main.command(epilog=EXIT_CODES, short_help="Check a file this tool wrote against its schema.")
@click.argument("path", type=click.Path(path_type=Path))
@reports_errors
def validate(path: Path) -> None:
    """Check a file this tool wrote against the schema of its kind. The index answers to
    schemas/index.schema.json (an extended index, from build --extended, to
    schemas/index-extended.schema.json: told apart by its version) and to the rules a schema
    cannot state: row_id unique, one row per model and GPU, rows in the documented order, the
    reference row among them, dates real and in order (audit and regenerate check the same).
    The build report answers to schemas/report.schema.json; the deadline sweep, curves,
    profiles, responses, impacts and the site's model and country files to the schema their
    'kind' names. A kind this tool does not write is refused.

    Example:

    \b
        energy-index validate output/index.json
        energy-index validate output/profiles.json
    """
    from energy_index import api

    problems = api.validate(path)
    for problem in problems:
        click.echo(f"{path}: {problem}", err=True)
    if problems:
        sys.exit(1)
    rules = " and the index rules" if "/index" in problems.schema else ""
    click.echo(f"{path}: valid against {problems.schema}{rules}")
