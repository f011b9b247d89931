"""The ``energy-index`` command line.

Heavy libraries (polars, pandera, httpx, jsonschema) are imported inside the commands, so that
``--help`` answers at once.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from energy_index import __version__, api
from energy_index.cli_options import (
    AUDIT_OPTIONS,
    BUILD_OPTIONS,
    CHANGED_EXIT_CODE,
    FETCH_OPTIONS,
    NAMES_OPTIONS,
    PLAN_OPTIONS,
    REFRESH_CARBON_OPTIONS,
    REGENERATE_OPTIONS,
    REPORT_OPTIONS,
    SITE_OPTIONS,
    VALIDATE_OPTIONS,
)
from energy_index.errors import (
    DerivationError,
    EnergyIndexError,
    NetworkError,
    NotAnIndex,
    UsageError,
    shown,
)

OFFLINE_HINT = (
    "hint: to {verb} without network, leave out --from (the vendored snapshot: the checkout's, "
    "else the copy installed with energy-index) or pass a snapshot directory: --from DIR "
    "(make index FROM=DIR)"
)
# What to do after a failed download, by command: each says what that command can do instead.
NETWORK_HINTS = {
    "regenerate": "hint: regenerate fetches upstream to compare the index with it, so it needs "
    "the network; nothing was replaced. To rebuild offline from the vendored snapshot: make index "
    "(energy-index build)",
    "refresh-carbon": "hint: refresh-carbon fetches CodeCarbon's grid intensities, so it needs "
    "the network; nothing was replaced (the carbon snapshot stays as it was)",
    "fetch": "hint: fetch needs the network; a snapshot already on disk needs none: build from it "
    "with --from DIR",
    "audit published": "hint: the published copy could not be downloaded; audit a local copy "
    "with --published FILE",
    "audit": "hint: to audit without network, pass the snapshot it was built from: --from DIR "
    "(the vendored snapshot rebuilds the published index offline), or --at the commit of a "
    "snapshot on disk",
}
INTERRUPTED_EXIT_CODE = 130
# stdout closed before the output was all written (``energy-index plan --json | head -1``): the
# status a shell reports for a Unix tool ended by SIGPIPE (128 + 13), so that `set -o pipefail`
# tells it from a failure of the command (1) and from success.
CLOSED_STDOUT_EXIT_CODE = 128 + 13

EXIT_CODES = """\b
Exit codes:
  0  success (regenerate: unchanged, or changed without --exit-code)
  1  data or validation failure (bad input, schema violation, audit difference)
  2  usage error (unknown option, bad value), or an output refused (not written by this
     tool, changed by hand since, or inside an input)
  3  network failure after retries (the message names the URL and the last error)
  10 regenerate --exit-code: the index changed
  130 interrupted (Ctrl-C): nothing replaced
  141 stdout closed early (a pipe into head): the rest is not printed, quietly"""

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(command: F) -> F:
    """Turn the pipeline's own errors into a message on stderr and their exit code."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except EnergyIndexError as error:
            click.echo(f"error: {_message(error)}", err=True)
            if isinstance(error, NetworkError):
                click.echo(network_hint(error), err=True)
            sys.exit(error.exit_code)
        except BrokenPipeError:
            # Only stdout is written after the work is done; a reader that stopped reading wants
            # no more of it, and no message either: end as Unix tools do.
            _silence_stdout()
            sys.exit(CLOSED_STDOUT_EXIT_CODE)
        except KeyboardInterrupt:
            # Every write is staged and renamed with SIGINT held back: nothing is half-done.
            click.echo("error: interrupted", err=True)
            sys.exit(INTERRUPTED_EXIT_CODE)
        except OSError as error:
            # The last line of defence: a file fault the code did not expect, named, no traceback.
            where = f"{shown(error.filename, path=True)}: " if error.filename else ""
            click.echo(
                f"error: {api.scrubbed_message(f'{where}{error.strerror or error}')}", err=True
            )
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush of what is still
    buffered does not raise BrokenPipeError again ("Exception ignored … Broken pipe")."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's CliRunner)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)


def network_hint(error: NetworkError) -> str:
    """The hint after a failed download that fits the running command (audit: whether it was
    the published copy's, which the audit flow marks as its ``published`` parameter's)."""
    context = click.get_current_context(silent=True)
    command = context.command.name if context is not None and context.command.name else ""
    if command == "audit":
        return NETWORK_HINTS["audit published" if error.parameter == "published" else "audit"]
    if command in NETWORK_HINTS:
        return NETWORK_HINTS[command]
    verb = {"site": "write the site", "report": "write the page"}.get(command, command or "build")
    return OFFLINE_HINT.format(verb=verb)


def _flag(error: EnergyIndexError) -> str:
    """``--task: `` for an error of the parameter ``task`` of the running command: the library's
    errors speak of values and name the keyword argument; the command line names its option. A
    network error names its URL instead."""
    context = click.get_current_context(silent=True)
    parameter = error.parameter
    if parameter is None or context is None or isinstance(error, NetworkError):
        return ""
    for param in context.command.params:
        flag = "--" + parameter.replace("_", "-")
        if isinstance(param, click.Option) and (param.name == parameter or flag in param.opts):
            return f"{max(param.opts, key=len)}: "
    return ""


def _printable_json(value: Any) -> str:
    """``value`` as indented JSON for a terminal: non-ASCII text kept, but every character a
    terminal or a log could act on (C1 controls such as CSI, bidirectional and line-separator
    characters, which JSON leaves raw) written as its ``\\u`` escape; the same JSON value.

    Example: ``_printable_json("a\\u202eb")`` → ``'"a\\\\u202eb"'``.
    """
    try:  # NaN and Infinity are no JSON: a reader that keeps to RFC 8259 would stop at them
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError as error:
        raise DerivationError(f"nothing printed: {error} (NaN or Infinity: not JSON)") from None
    return "".join(c if c.isprintable() or c == "\n" else json.dumps(c)[1:-1] for c in text)


def _message(error: EnergyIndexError) -> str:
    """An error as the command line prints it: the flag at fault, then the message; whatever
    raised it, no credential is printed (the last line of defence, as for files)."""
    return api.scrubbed_message(_flag(error) + str(error))


def _failed_audit(error: EnergyIndexError) -> dict[str, Any]:
    """``audit --json``'s document when there is no comparison: the outcome (``not an index``:
    the published copy cannot be read as one; ``cannot fetch``: a download failed; else
    ``error``), the message as the command line prints it, and the exit code."""
    outcome = {NotAnIndex: "not an index", NetworkError: "cannot fetch"}
    return {
        "outcome": next((o for kind, o in outcome.items() if isinstance(error, kind)), "error"),
        "identical": False,
        "error": _message(error),
        "exit_code": error.exit_code,
    }


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


def command(
    options: Callable[[F], F], short_help: str | None = None
) -> Callable[[F], click.Command]:
    """A command of ``main``, named after its function (``refresh_carbon``: refresh-carbon),
    with its ``options``, its errors reported (``reports_errors``) and the exit codes in its
    help."""

    def declare(function: F) -> click.Command:
        declared = main.command(epilog=EXIT_CODES, short_help=short_help)
        return declared(options(reports_errors(function)))

    return declare


def _notify(line: str) -> None:
    """Progress of a flow (what was fetched, what was kept): on stderr, as it happens."""
    click.echo(line, err=True)


@command(FETCH_OPTIONS, short_help="Download upstream into a snapshot directory.")
def fetch(**options: Any) -> None:
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
    api.fetch(**options, notify=_notify)


@command(BUILD_OPTIONS)
def build(**options: Any) -> None:
    """Build the index and write it with its build report.

    --from takes a snapshot directory (the default is the vendored one, the input of the
    committed output: offline), or the upstream repository URL ('live'), which is fetched into
    --cache first. Dates not given are those --from's snapshot.json records for its index
    (index_dates), else the snapshot's retrieval date: never the clock, nor the index already at
    --out, so rebuilding unchanged input gives the same bytes. Nothing is written unless every
    stage succeeds. A diffusion task (text-to-image, text-to-video) gets its own index, energy
    per image or per video, picked under --deadline-s (docs/design.md).

    Example:

    \b
        energy-index build
        energy-index build --from live --out /tmp/live/index.json
        energy-index build --from snapshots/ml-energy-leaderboard \\
            --retrieved 2026-09-26 --updated 2026-09-27 --out output/index.json
        energy-index build --from snapshots/ml-energy-leaderboard \\
            --all-tasks --itl-deadline-ms 50,100,250,500 --curves --format csv
    """
    task_source = click.get_current_context().get_parameter_source("task")
    if options["all_tasks"] and task_source is not click.core.ParameterSource.DEFAULT:
        raise UsageError("--all-tasks builds every task: give it or --task, not both")
    # Every option is a keyword argument of api.build, of the same name and default
    # (tests/test_public_api.py).
    built = api.build(**options, notify=_notify)
    if options["all_tasks"]:
        for result in built.tasks.values():
            rows = len(result.document["rows"])
            click.echo(f"wrote {result.files[0]} ({rows} rows){_and_beside(result.files)}")
        return
    counts = built.report["counts"]
    # A diffusion index has no stability filter: every configuration is a candidate.
    stable = f"{counts['stable']} stable of " if "stable" in counts else ""
    click.echo(
        f"wrote {built.files[0]} ({counts['rows']} rows from {stable}"
        f"{counts['configurations']} configurations){_and_beside(built.files)}"
    )


def _and_beside(files: tuple[Path, ...]) -> str:
    """The files a build wrote beside its index (``files[0]``), for its ``wrote`` line."""
    rest = [str(path) for path in files[1:]]
    if len(rest) < 2:
        return "".join(f" and {path}" for path in rest)
    return f", {', '.join(rest[:-1])} and {rest[-1]}"


@command(REGENERATE_OPTIONS, short_help="Fetch, rebuild; replace the index if changed.")
def regenerate(exit_code: bool, **options: Any) -> None:
    """Fetch, rebuild, and replace the index only if its data changed.

    Unchanged (same rows and non-volatile header): the file keeps its bytes and dates, and this
    prints "unchanged (upstream <commit>)". Changed: the index is written with updated = today
    (and data_version = today if rows changed), the changelog is printed, appended to
    CHANGELOG.md beside the index, and written as <name>.changelog.json. Two regenerations of
    the same --out never interleave: the second waits for the first (see --lock-timeout).

    The index is built from --vendored, the vendored copy of upstream kept as its input: when
    upstream's files changed, the fetched snapshot replaces it together with the index, its
    build report and the changelogs, all or nothing (a change in files the index does not read
    still replaces the snapshot and the report, with a changelog line). The vendored
    snapshot.json records the index's dates, so a build of it in an empty folder gives the
    index's bytes. A refused build, or any failure, replaces nothing.

    Example:

    \b
        energy-index regenerate --exit-code; [ $? -eq 10 ] && echo "index changed"
    """
    outcome = api.regenerate(**options, notify=_notify)
    upstream = outcome.upstream
    if outcome.changelog is None:
        click.echo(f"unchanged (upstream {upstream})")
    else:
        click.echo(f"changed (upstream {upstream}): wrote {Path(options['out'])}")
        for line in outcome.changelog.lines():
            click.echo(f"  {line}")
    if outcome.snapshot_replaced:
        click.echo(f"  vendored snapshot {outcome.vendored}: replaced by upstream {upstream}")
    if outcome.changelog is not None and exit_code:
        sys.exit(CHANGED_EXIT_CODE)


@command(REFRESH_CARBON_OPTIONS, short_help="Refresh the vendored grid carbon snapshot.")
def refresh_carbon(exit_code: bool, **options: Any) -> None:
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
    outcome = api.refresh_carbon(**options, notify=_notify)
    if outcome.changelog is None:
        click.echo(f"unchanged (upstream {outcome.commit})")
        return
    click.echo(f"changed (upstream {outcome.commit}): replaced {options['vendored']}")
    click.echo(outcome.changelog["markdown"].rstrip())
    if exit_code:
        sys.exit(CHANGED_EXIT_CODE)


@command(AUDIT_OPTIONS, short_help="Compare a published copy with a rebuild.")
def audit(as_json: bool, **options: Any) -> None:
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
    try:
        result = api.audit(**options, notify=_notify)
    except EnergyIndexError as error:
        if as_json:  # a scheduled audit reads a verdict on stdout; the message goes on stderr
            click.echo(_printable_json(_failed_audit(error)))
        raise
    if as_json:
        click.echo(_printable_json(result.as_json()))
    else:
        for line in [result.basis, *result.lines()]:
            click.echo(line)
    sys.exit(0 if result.identical else 1)


@command(REPORT_OPTIONS, short_help="Write the interactive HTML report page.")
def report(**options: Any) -> None:
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
    page = api.report(**options, notify=_notify)
    png = f" and {page.png}" if page.png else ""
    click.echo(f"wrote {page.path} ({page.size >> 10} KiB){png}")


@command(SITE_OPTIONS, short_help="Write the static site and its JSON API.")
def site(**options: Any) -> None:
    """Write the static site: every task's report page and a JSON API with a Data Package.

    index.html is the report of --index; tasks/<task>/index.html one per task;
    api/v1/tasks/<task>/{index,deadlines}.json and index.csv; api/v1/models/<slug>.json every
    GPU's row and curve of a model; datapackage.json describes the tables and the licence.
    api/v1/tasks/<task>/impacts.json (and impacts.csv) holds the measured GPU energy beside
    estimated server and facility ranges, and every country's grid intensity once (from
    --carbon): each page applies a chosen country's to the rows in the browser (the site grows
    with rows; impacts format 2 has no per-country files). cards/<task>/<slug>/index.html a
    model's cards, one per pick (#<gpu>, the GPU in lower case: #h100), and
    cards/<task>/index.html what a token task's cards share.
    api/v1/tasks/<task>/plan.json the plan at each load of a grid
    (docs/plan.md), profiles.json the picks at other deadlines, responses.json the energy per
    response.
    Each JSON file is schema-checked; the directory is replaced only once all are written. A
    file of the previous site changed by hand (its sha256 is not the one files.json records)
    stops the run (exit 2, naming it) unless --force.

    Example:

        energy-index site --index output/index.json --out site
    """
    written = api.site(**options, notify=_notify)
    files = written.files
    click.echo(
        f"wrote {written.path}/ ({len(files)} files, {sum(map(len, files.values())) >> 10} KiB)"
    )


@command(PLAN_OPTIONS, short_help="Energy at your load: replicas and their energy.")
def plan(as_json: bool, as_csv: bool, **options: Any) -> None:
    """The replicas that carry a load with the lowest upper bound of total GPU power, and their
    energy, read from the measured curves: not the index's saturation floor, the energy at your
    load.

    For each model, GPU type and GPU count, the stable configurations that meet the latency
    target are ordered by throughput; a load per replica that falls between two of them takes
    their power range (between_measured), one below the lightest an assumed upper bound only
    (assumed_upper_bound: idle power is not measured). The replica count with the lowest upper
    bound of total power is chosen, no replica beyond --max-utilization of its family's fastest
    configuration; the family with the lowest upper bound of total power (power alone: quality
    is not considered) is printed first with what was compared and the configurations it was
    read from, then the runner-up as the alternative and how close it is. Facility energy and
    carbon (--country) are estimates from the impacts' cited factors, kept apart, with their
    inputs. The method, the choice rule and what is not measured follow the answer
    (docs/plan.md).

    Example:

    \b
        energy-index plan --model "Qwen 3 14B" --gpu B200 --tokens-per-second 2000
        energy-index plan --requests-per-second 50 --itl-statistic p99 --itl-deadline-ms 100
        energy-index plan --tokens-per-second 1e5 --country FRA --json
    """
    if as_json and as_csv:
        raise UsageError("--json and --csv: give one of them")
    result = api.plan(**options, notify=_notify)
    if as_json:
        click.echo(_printable_json(result.as_json()))
    elif as_csv:
        click.echo(result.csv().decode("utf-8"), nl=False)
    else:
        for line in result.lines():
            click.echo(line)


@command(NAMES_OPTIONS, short_help="List a snapshot's tasks, models and GPU types.")
def names(as_json: bool, **options: Any) -> None:
    """List the tasks of a snapshot and, per task, the models and GPU types the planner reads
    (a token task's stable configurations, every configuration of a diffusion task): each model
    by nickname, model id and slug, all three taken by plan --model (any case), as a GPU type by
    its name by plan --gpu.

    Example:

    \b
        energy-index names --task lm-arena-chat
        energy-index names --json
    """
    result = api.names(**options, notify=_notify)
    if as_json:
        click.echo(_printable_json(result.as_json()))
    else:
        for line in result.lines():
            click.echo(line)


@command(VALIDATE_OPTIONS, short_help="Check a file this tool wrote against its schema.")
def validate(path: Path) -> None:
    """Check a file this tool wrote against the schema of its kind. The index answers to
    schemas/index.schema.json (an extended index, from build --extended, to
    schemas/index-extended.schema.json: told apart by its version) and to the rules a schema
    cannot state: row_id unique, one row per model and GPU, rows in the documented order, the
    reference row among them, dates real and in order (audit and regenerate check the same).
    The build report answers to schemas/report.schema.json; the deadline sweep, curves,
    profiles, responses, impacts and the site's model and plan files to the schema their
    'kind' names, and the latency profiles also to the rules of their lists (each as long as
    deadlines_ms, a GPU ratio's at the deadlines where both GPUs pick) and objects (one per
    model, GPU and statistic). A deadline sweep is held to the rules of its groups by field:
    each list as long as the deadlines, which ascend; a row null in every field where no
    configuration meets the deadline (which binds) and in none where one is selected; a row of
    its group, within its deadline, no more energy than at a smaller one; a pick that meets a
    smaller deadline is the pick there too; the deadlines that do not bind hold the pick with
    no deadline. Curves and the site's model files are held to the rules of their points by
    field: a curve's lists as long as each other, in the order of max_num_seqs (batch size),
    each pareto flag what the points make it; curves one per family, in order; a model file's
    rows and curves its model's. The site's plan files are held to their plans' counts: each
    plan at its load, its gpus its replicas × num_gpus, high_utilization exactly where the
    planner calls a utilization high, the plan with headroom within its limit, the (model, GPU)
    pairs one each, in order. A kind this tool does not write is refused, and so is one it
    writes without a schema (plan --json, audit --json, the changelogs, datapackage.json),
    named as such. A file that breaks its schema is told which schema first, then each problem.

    Example:

    \b
        energy-index validate output/index.json
        energy-index build --profiles --out /tmp/profiles/index.json
        energy-index validate /tmp/profiles/profiles.json
    """
    problems = api.validate(path)
    rules = f" and {problems.rules}" if problems.rules else ""
    if problems and problems.schema:  # problems alone did not say what they are problems of
        click.echo(f"{path}: not valid against {problems.schema}{rules}:", err=True)
    for problem in problems:
        click.echo(f"{path}: {problem}", err=True)
    if problems:
        sys.exit(1)
    click.echo(f"{path}: valid against {problems.schema}{rules}")
