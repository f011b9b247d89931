"""The command line's options, declared once each and grouped per command (``BUILD_OPTIONS``
and so on), so that cli.py holds only what each command does with them.

Click only: the values are checked where the Python API checks them (api.py, the flows), so
that both refuse the same values with the same words; cli.py names the flag of a refused value.
The network options are made from model.NetworkSettings, the defaults read from settings.py.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from energy_index.errors import UsageError
from energy_index.model import ITL_STATISTICS, NetworkSettings, checked_deadlines, json_number
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

F = TypeVar("F", bound=Callable[..., Any])
CHANGED_EXIT_CODE = 10


def stacked(*options: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator applying ``options`` in order, as if written one above the other."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


class IsoDate(click.ParamType):  # type: ignore[type-arg]
    """A date, as given: the API checks it (model.checked_day), so that the command line refuses
    what the API does, in its words, naming the flag."""

    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return value


def _network_option(setting: dataclasses.Field[Any]) -> Callable[[F], F]:
    """The option of one network setting, as its field in model.NetworkSettings describes it."""
    spec, default = setting.metadata["option"], setting.default
    flag = spec["flag"] or "--" + setting.name.replace("_", "-")
    if isinstance(default, bool):
        return click.option(flag, setting.name, is_flag=True, help=spec["help"])
    if default is None:
        return click.option(flag, setting.name, help=spec["help"])
    kind = _kind_of(spec, default)
    envvar = f"ENERGY_INDEX_{flag[2:].replace('-', '_').upper()}" if spec["envvar"] else None
    option = click.option(
        flag, setting.name, type=kind, default=default, show_default=True, envvar=envvar,
        show_envvar=envvar is not None, help=spec["help"],
    )  # fmt: skip
    if not spec["old_flag"]:
        return option
    old_envvar = f"ENERGY_INDEX_{spec['old_flag'][2:].replace('-', '_').upper()}"
    old = click.option(
        spec["old_flag"], f"old_{setting.name}", type=kind, default=None, hidden=True,
        envvar=old_envvar if spec["envvar"] else None,
    )  # fmt: skip
    return lambda command: option(old(command))


def _kind_of(spec: dict[str, Any], default: Any) -> Any:
    if isinstance(default, int):
        return click.IntRange(min=spec["min"], min_open=spec["min_open"])
    if isinstance(default, float):
        return click.FloatRange(min=spec["min"], min_open=spec["min_open"])
    return None


def _renamed(setting: dataclasses.Field[Any], kwargs: dict[str, Any]) -> None:
    """A network setting given under its former name (``old_flag``: --deadline, or its
    environment variable) is taken, with a warning on stderr; under both names, refused."""
    spec = setting.metadata["option"]
    if not spec["old_flag"]:
        return
    value = kwargs.pop(f"old_{setting.name}")
    if value is None:
        return
    context = click.get_current_context()
    new_source = context.get_parameter_source(setting.name)
    if new_source not in (None, click.core.ParameterSource.DEFAULT):
        raise click.UsageError(
            f"{spec['old_flag']} is the former name of {spec['flag']}: give {spec['flag']} alone"
        )
    by_environment = (
        context.get_parameter_source(f"old_{setting.name}")
        is click.core.ParameterSource.ENVIRONMENT
    )
    old, new = spec["old_flag"], spec["flag"]
    if by_environment:
        old, new = (f"ENERGY_INDEX_{f[2:].replace('-', '_').upper()}" for f in (old, new))
    click.echo(
        f"warning: {old} is now {new} (seconds for all the command's downloads: not a latency "
        f"target, which is --itl-deadline-ms); {old} stops working in the next release",
        err=True,
    )
    kwargs[setting.name] = value


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


def former_option(old: str, new: str) -> Callable[[F], F]:
    """``old``, the former name of the option ``new`` (before 1.1), working for one release:
    ``former(new)`` takes its value, with a warning on stderr; both given, refused."""
    name = new[2:].replace("-", "_")

    def remembered(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value is not None:
            ctx.meta[f"former {name}"] = (old, value)

    return click.option(
        old, f"former_{name}", type=click.Path(path_type=Path), default=None, hidden=True,
        expose_value=False, callback=remembered,
    )  # fmt: skip


def former(new: str, value: Any) -> Any:
    """The value of the option ``new``, or of its former name (``former_option``) if given."""
    context = click.get_current_context()
    name = new[2:].replace("-", "_")
    given = context.meta.get(f"former {name}")
    if given is None:
        return value
    old, former_value = given
    if context.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
        raise click.UsageError(f"{old} is the former name of {new}: give {new} alone")
    click.echo(f"warning: {old} is now {new}; {old} stops working in the next release", err=True)
    return former_value


def network_options(command: F) -> F:
    """Add the network options to a command and hand them to it as one ``network`` value."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for setting in _NETWORK_SETTINGS:
            _renamed(setting, kwargs)
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


def path_option(*names: str, default: str | None = None, **more: Any) -> Callable[[F], F]:
    """An option naming a file or folder, handed on as a Path; its default shown when it has one."""
    return click.option(
        *names,
        type=click.Path(path_type=Path),
        default=None if default is None else Path(default),
        show_default=default is not None,
        **more,
    )


carbon_option = path_option(
    "--carbon",
    default=CARBON_SNAPSHOT,
    help="The grid carbon intensity snapshot (CodeCarbon's energy mix, vendored like the "
    f"leaderboard's) that impacts are built from{INSTALLED_COPY}.",
)


cache_option = path_option(
    "--cache",
    default=DEFAULT_CACHE,
    envvar="ENERGY_INDEX_CACHE",
    show_envvar=True,
    help="Where a fetched snapshot is kept, so that the next fetch is conditional.",
)


task_option = click.option(
    "--task", default=DEFAULT_TASK, show_default=True, help="Upstream task to index."
)


class Deadline(click.ParamType):  # type: ignore[type-arg]
    """One deadline in milliseconds, as given: the API reads and checks it (api.checked_deadline),
    so that the command line refuses what the API does, in its words, naming the flag."""

    name = "MS"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return _read_deadlines(value, one=True)


deadline_option = click.option(
    "--itl-deadline-ms",
    type=Deadline(),
    default=DEFAULT_ITL_DEADLINE_MS,
    show_default=True,
    help="Inter-token latency deadline in milliseconds, inclusive: the latency target a pick "
    "meets, on the statistic --itl-statistic.",
)


out_option = click.option(
    "--out",
    type=click.Path(),  # text, so that the API sees a trailing '/' (Path would drop it)
    default=Path(DEFAULT_OUT),
    show_default=True,
    help="Index file to write; its build report goes beside it as <name>.report.json.",
)


class Deadlines(click.ParamType):  # type: ignore[type-arg]
    """One deadline, or several separated by commas (a sweep), as given: the API reads and checks
    them (api.checked_deadlines), so that both refuse the same values in the same words."""

    name = "MS[,MS…]"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return _read_deadlines(value, one=False)


def _read_deadlines(value: Any, *, one: bool) -> Any:
    """Deadlines as the API reads them (``model.checked_deadlines``, the one rule); a value it
    refuses goes on as typed, for the API to refuse in its words showing what was typed (0,
    not 0.0)."""
    if isinstance(value, tuple | float):
        return value
    try:
        parsed = checked_deadlines(value)
    except UsageError:
        return value
    if one and len(parsed) > 1:
        return value
    return parsed[0] if one else parsed


class Statistic(click.ParamType):  # type: ignore[type-arg]
    """An ITL statistic, shown as a choice, as given: the API checks it (api.checked_statistic)."""

    name = "statistic"

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        return f"[{'|'.join(ITL_STATISTICS)}]"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return value


index_option = path_option(
    "--index",
    default=DEFAULT_OUT,
    help="The index to document; its build report <name>.report.json must sit beside it "
    f"({DEFAULT_OUT}{INSTALLED_COPY}: the published index).",
)


itl_statistic_option = click.option(
    "--itl-statistic",
    type=Statistic(),
    default=DEFAULT_ITL_STATISTIC,
    show_default=True,
    help="Which inter-token latency statistic the deadline applies to: the median (the "
    "leaderboard's own rule, the published index) or a tail percentile. The index's selection "
    "text and the build report name it.",
)


def exit_code_option(what: str) -> Callable[[F], F]:
    return click.option(
        "--exit-code",
        is_flag=True,
        help=f"Exit {CHANGED_EXIT_CODE} when {what} changed, so a scheduler can tell.",
    )


date_option = click.option(
    "--date", "today", type=IsoDate(), help="Date to stamp a change with [default: today, UTC]."
)


# fetch
FETCH_OPTIONS = stacked(
    path_option("--to", required=True, help="Snapshot directory to write."),
    click.option(
        "--task",
        "tasks",
        multiple=True,
        default=[DEFAULT_TASK],
        show_default=True,
        help="Task file to fetch; repeat for several.",
    ),
    click.option(
        "--repository",
        default=UPSTREAM_URL,
        show_default=True,
        help="Upstream GitHub repository URL.",
    ),
    FORCE_OPTION,
    network_options,
)

# build
BUILD_OPTIONS = stacked(
    source_option(VENDORED_SNAPSHOT),
    task_option,
    click.option(
        "--itl-deadline-ms",
        type=Deadlines(),
        default=str(json_number(DEFAULT_ITL_DEADLINE_MS)),
        show_default=True,
        help="Inter-token latency deadline in milliseconds, inclusive. Several, comma-separated "
        "(50,100,250,500), also write the deadline sweep, deadlines.json, beside the index, which "
        "then uses the largest.",
    ),
    itl_statistic_option,
    out_option,
    click.option(
        "--retrieved",
        type=IsoDate(),
        help="Date the data was retrieved [default: the one --from's snapshot.json records for its "
        "index (index_dates), else the snapshot's retrieval date].",
    ),
    click.option(
        "--updated",
        type=IsoDate(),
        help="Date the file is written [default: the one --from's snapshot.json records for its "
        "index (index_dates), else --retrieved].",
    ),
    click.option(
        "--all-tasks",
        is_flag=True,
        help="Build one index per LLM and multimodal task, as tasks/<task>/index.json beside --out "
        "(which is not written).",
    ),
    click.option("--curves", is_flag=True, help="Also write curves.json (concurrency curves)."),
    click.option(
        "--profiles",
        is_flag=True,
        help="Also write profiles.json, the latency profiles: per model and GPU, the pick under "
        "each ITL statistic (median, p90, p95, p99) at each deadline of 5, 10, 20, 50, 100, 200, "
        "500 ms and every --itl-deadline-ms, its energy penalty, and whether the deadline binds "
        "(with --format, also profiles.csv or profiles.parquet).",
    ),
    click.option(
        "--responses",
        is_flag=True,
        help="Also write responses.json: per pick, Wh per response at the 10th, 50th, 90th and "
        "99th percentile of its output-length distribution and at its mean, from upstream's "
        "per-model files (a snapshot without them: each pick says it was skipped, and why).",
    ),
    click.option(
        "--extended",
        is_flag=True,
        help="Also write <name>.extended.json: the index with robustness figures per row "
        "(format 1-extended); the index itself is unchanged.",
    ),
    click.option(
        "--format",
        "formats",
        type=click.Choice(TABLE_FORMATS),
        multiple=True,
        help="Also write the rows as <name>.csv or <name>.parquet; repeat for both.",
    ),
    click.option(
        "--impacts",
        is_flag=True,
        help="Also write impacts.json (and impacts.csv/.parquet with --format): per row the "
        "measured GPU energy beside estimated server and facility energy and carbon by country, "
        "as ranges from cited factors and the carbon snapshot (--carbon). The index itself is "
        "unchanged.",
    ),
    carbon_option,
    cache_option,
    REPLACE_OPTION,
    network_options,
)

# regenerate
REGENERATE_OPTIONS = stacked(
    source_option(LIVE),
    task_option,
    deadline_option,
    out_option,
    exit_code_option("the index"),
    date_option,
    click.option(
        "--lock-timeout",
        type=click.FloatRange(min=0),
        default=LOCK_TIMEOUT_SECONDS,
        show_default=True,
        help="Seconds to wait for another regeneration of the same --out to finish.",
    ),
    former_option("--snapshot", "--vendored"),
    path_option(
        "--vendored",
        "vendored",
        help="The vendored snapshot to keep as the input of --out: replaced by the fetched one, "
        "together with the index, when upstream's files changed (created if missing). [default: "
        f"{VENDORED_SNAPSHOT} when --out is {DEFAULT_OUT}; with another --out, none is kept]",
    ),
    cache_option,
    REPLACE_OPTION,
    network_options,
)

# refresh-carbon
REFRESH_CARBON_OPTIONS = stacked(
    former_option("--snapshot", "--vendored"),
    path_option(
        "--vendored",
        default=CARBON_SNAPSHOT,
        help="The vendored carbon snapshot, replaced whole when upstream's file changed.",
    ),
    path_option(
        "--changelog-dir",
        help="Where carbon.changelog.json and the CHANGELOG.md entry go [default: the folder of "
        f"{DEFAULT_OUT}].",
    ),
    exit_code_option("the snapshot"),
    date_option,
    cache_option,
    REPLACE_OPTION,
    network_options,
)

# audit
AUDIT_OPTIONS = stacked(
    click.option(
        "--published",
        default=DEFAULT_OUT,
        show_default=True,
        help="The published index (or impacts.json) to check: a file, or an https:// URL where it "
        f"is served ({DEFAULT_OUT}{INSTALLED_COPY}: the published index).",
    ),
    click.option(
        "--from",
        "source",
        help="Rebuild from this snapshot directory, upstream URL or 'live' [default: the "
        f"vendored snapshot ({VENDORED_SNAPSHOT}{INSTALLED_COPY}) when the published file records "
        "its dates, else the upstream commit current at the published source.retrieved].",
    ),
    click.option(
        "--at",
        help="Rebuild from this upstream commit instead of the one the published file's dates "
        "point to: offline from the vendored snapshot or --cache when one is at that commit, else "
        "fetched. 40 hex digits, or the first 7 or more of a snapshot's on disk.",
    ),
    carbon_option,
    click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print one JSON document on stdout whatever the outcome: its 'outcome' is identical, "
        "differs, not an index, cannot fetch or error (the message in 'error').",
    ),
    cache_option,
    network_options,
)

# report and site: site takes report's inputs (the index, and the snapshot its build report
# names); only what it writes differs.
PAGE_INPUTS = stacked(index_option, source_option(VENDORED_SNAPSHOT))
REPORT_OPTIONS = stacked(
    PAGE_INPUTS,
    path_option(
        "--out",
        default=DEFAULT_REPORT_PAGE,
        help="The page to write.",
    ),
    path_option(
        "--png",
        help="Also render the page's charts to this PNG, e.g. docs/report.png. Needs the optional "
        "extra vl-convert-python: pip install 'energy-index[png]'.",
    ),
    carbon_option,
    cache_option,
    REPLACE_OPTION,
    network_options,
)

SITE_OPTIONS = stacked(
    PAGE_INPUTS,
    path_option(
        "--out",
        default=DEFAULT_SITE,
        help="The site directory, replaced whole.",
    ),
    carbon_option,
    cache_option,
    FORCE_OPTION,
    network_options,
)


# plan
class Load(click.ParamType):  # type: ignore[type-arg]
    """A load (tokens or requests per second, tokens per request), as typed: an integer stays
    one, so that a refusal shows 0 and not 0.0, and text that is no number goes to the API,
    which refuses it in its words (click's FLOAT said "is not a valid float")."""

    name = "FLOAT"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        for number in (int, float):
            try:
                return number(value)
            except (TypeError, ValueError):
                pass
        return value


PLAN_OPTIONS = stacked(
    click.option(
        "--tokens-per-second",
        type=Load(),
        help="The total load, in output tokens per second (or give --requests-per-second).",
    ),
    click.option(
        "--requests-per-second",
        type=Load(),
        help="The total load in requests per second, × --output-tokens-per-request.",
    ),
    click.option(
        "--output-tokens-per-request",
        type=Load(),
        help="Output tokens per request [default: each family's measured mean output length].",
    ),
    deadline_option,
    itl_statistic_option,
    click.option("--model", help="Only this model (nickname or model id, any case)."),
    click.option("--gpu", help="Only this GPU type (e.g. B200)."),
    click.option(
        "--country",
        "countries",
        multiple=True,
        help="Estimated carbon for this country (ISO 3166-1 alpha-3, e.g. FRA); repeat for several "
        "[default: every country of --carbon, in --json and --csv only].",
    ),
    task_option,
    source_option(VENDORED_SNAPSHOT),
    carbon_option,
    click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON."),
    click.option(
        "--csv", "as_csv", is_flag=True, help="Print the plan and its alternative as CSV."
    ),
    cache_option,
    network_options,
)

# validate
VALIDATE_OPTIONS = stacked(
    click.argument("path", type=click.Path(path_type=Path)),
)
