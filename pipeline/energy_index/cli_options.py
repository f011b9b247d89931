"""The command line's options, declared once each and grouped per command (``BUILD_OPTIONS``
and so on), so that cli.py holds only what each command does with them.

Click only: an option's value goes on as typed (a load's text read as the number it is), and
the Python API checks it, so that both refuse the same values with the same words; cli.py names
the flag of a refused value. The network options are made from model.NetworkSettings, the
defaults read from settings.py. A former name of an option is declared with ``former_option``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from energy_index import settings
from energy_index.model import EXTRAS, ITL_STATISTICS, NetworkSettings, json_number, typed_number

F = TypeVar("F", bound=Callable[..., Any])
CHANGED_EXIT_CODE = 10


def stacked(*options: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator applying ``options`` in order, as if written one above the other."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def _network_option(setting: dataclasses.Field[Any]) -> Callable[[F], F]:
    """The option of one network setting, as its field in model.NetworkSettings describes it."""
    spec, default = setting.metadata["option"], setting.default
    flag = spec.flag or "--" + setting.name.replace("_", "-")
    if isinstance(default, bool):
        return click.option(flag, setting.name, is_flag=True, help=spec.help)
    if default is None:
        return click.option(flag, setting.name, help=spec.help)
    # A number's range: no less than the minimum (greater, when open); text has none.
    bounded = {int: click.IntRange, float: click.FloatRange}.get(type(default))
    kind = bounded(min=spec.minimum, min_open=spec.open_minimum) if bounded else None
    envvar = _envvar(flag) if spec.envvar else None
    option = click.option(
        flag, setting.name, type=kind, default=default, show_default=True, envvar=envvar,
        show_envvar=envvar is not None, help=spec.help,
    )  # fmt: skip
    if not spec.old_flag:
        return option
    renamed = former_option(
        spec.old_flag, flag, kind, name=setting.name, envvar=spec.envvar,
        why=spec.old_why,
    )  # fmt: skip
    return lambda command: renamed(option(command))


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


def _envvar(flag: str) -> str:
    return f"ENERGY_INDEX_{flag[2:].replace('-', '_').upper()}"


def former_option(
    old: str, new: str, kind: Any, *, name: str | None = None, envvar: bool = False, why: str = ""
) -> Callable[[F], F]:
    """``old``, the former name of the option ``new`` (of the parameter ``name``), working for
    one release: its value (of click type ``kind``; also read from ENERGY_INDEX_<OLD> when
    ``envvar``) is taken as ``new``'s, with a warning on stderr saying ``why`` the name changed;
    both given, refused."""
    name = name or new[2:].replace("-", "_")
    former = f"former_{name}"

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(former)
            if value is not None:
                kwargs[name] = value
                _warn_former(old, new, name, former, why)
            return command(*args, **kwargs)

        option = click.option(
            old, former, type=kind, default=None, hidden=True,
            envvar=_envvar(old) if envvar else None,
        )  # fmt: skip
        return option(wrapper)  # type: ignore[return-value]

    return decorate


def _warn_former(old: str, new: str, name: str, former: str, why: str) -> None:
    context = click.get_current_context()
    if context.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
        raise click.UsageError(f"{old} is the former name of {new}: give {new} alone")
    if context.get_parameter_source(former) is click.core.ParameterSource.ENVIRONMENT:
        old, new = _envvar(old), _envvar(new)
    because = f" ({why})" if why else ""
    click.echo(
        f"warning: {old} is now {new}{because}; {old} stops working in the next release", err=True
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
    "; by default the path of that name in the working directory (a checkout) or in the "
    "checkout it is a subfolder of, else the copy installed with energy-index"
)


def source_option(default: str) -> Callable[[F], F]:
    vendored = f" ({default}{INSTALLED_COPY}: the input of the published index)"
    return click.option(
        "--from",
        "source",
        default=default,
        show_default=True,
        help="Snapshot directory (upstream paths plus snapshot.json), the upstream GitHub "
        f"repository URL to fetch from, or '{settings.LIVE}' for {settings.UPSTREAM_URL}"
        + (vendored if default == settings.VENDORED_SNAPSHOT else "")
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
    default=settings.CARBON_SNAPSHOT,
    help="The grid carbon intensity snapshot (CodeCarbon's energy mix, vendored like the "
    f"leaderboard's) that impacts are built from{INSTALLED_COPY}.",
)


cache_option = path_option(
    "--cache",
    default=settings.DEFAULT_CACHE,
    envvar="ENERGY_INDEX_CACHE",
    show_envvar=True,
    help="Where a fetched snapshot is kept, so that the next fetch is conditional.",
)


task_option = click.option(
    "--task", default=settings.DEFAULT_TASK, show_default=True, help="Upstream task to index."
)


# A deadline goes on as typed (click.UNPROCESSED: text, or the default's number): the API reads
# it (model.checked_deadline), so that a refusal shows what was typed (0, not 0.0).
deadline_option = click.option(
    "--itl-deadline-ms",
    type=click.UNPROCESSED,
    metavar="MS",
    default=settings.DEFAULT_ITL_DEADLINE_MS,
    show_default=True,
    help="Inter-token latency deadline in milliseconds, inclusive: the latency target a pick "
    "meets, on the statistic --itl-statistic.",
)


deadline_s_option = click.option(
    "--deadline-s",
    type=click.UNPROCESSED,
    metavar="S",
    help="Batch latency deadline in seconds, inclusive, of a diffusion task (text-to-image, "
    "text-to-video): the time to generate one batch a pick meets [default: the "
    "leaderboard's default of the task]. Refused for a token task, as --itl-deadline-ms "
    "and --itl-statistic other than their defaults are for a diffusion task.",
)


out_option = click.option(
    "--out",
    type=click.Path(),  # text, so that the API sees a trailing '/' (Path would drop it)
    default=Path(settings.DEFAULT_OUT),
    show_default=True,
    help="Index file to write; its build report goes beside it as <name>.report.json.",
)


index_option = path_option(
    "--index",
    default=settings.DEFAULT_OUT,
    help="The index to document; its build report <name>.report.json must sit beside it "
    f"({settings.DEFAULT_OUT}{INSTALLED_COPY}: the published index).",
)


itl_statistic_option = click.option(
    "--itl-statistic",
    metavar=f"[{'|'.join(ITL_STATISTICS)}]",
    default=settings.DEFAULT_ITL_STATISTIC,
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
    "--date",
    "today",
    metavar="YYYY-MM-DD",
    help="Date to stamp a change with [default: today, UTC].",
)


# The last options of every command that may fetch and writes its own outputs.
FETCHES_AND_REPLACES = stacked(cache_option, REPLACE_OPTION, network_options)

FETCH_OPTIONS = stacked(
    path_option("--to", required=True, help="Snapshot directory to write."),
    click.option(
        "--task",
        "tasks",
        multiple=True,
        default=[settings.DEFAULT_TASK],
        show_default=True,
        help="Task file to fetch; repeat for several.",
    ),
    click.option(
        "--repository",
        default=settings.UPSTREAM_URL,
        show_default=True,
        help="Upstream GitHub repository URL.",
    ),
    FORCE_OPTION,
    network_options,
)

BUILD_OPTIONS = stacked(
    source_option(settings.VENDORED_SNAPSHOT),
    task_option,
    click.option(
        "--itl-deadline-ms",
        type=click.UNPROCESSED,
        metavar="MS[,MS…]",
        default=json_number(settings.DEFAULT_ITL_DEADLINE_MS),
        show_default=True,
        help="Inter-token latency deadline in milliseconds, inclusive. Several, comma-separated "
        "(50,100,250,500), also write the deadline sweep, deadlines.json, beside the index, which "
        "then uses the largest.",
    ),
    itl_statistic_option,
    click.option(
        "--deadline-s",
        type=click.UNPROCESSED,
        metavar="S[,S…]",
        help="Batch latency deadline in seconds, inclusive, of a diffusion task (text-to-image, "
        "text-to-video): the time to generate one batch a pick meets [default: the "
        "leaderboard's default of the task]. Several, comma-separated (10,30,60), also write "
        "the deadline sweep, deadlines.json, beside the index, which then uses the largest. "
        "Refused for a token task, as --itl-deadline-ms and --itl-statistic other than their "
        "defaults are for a diffusion task.",
    ),
    out_option,
    click.option(
        "--retrieved",
        metavar="YYYY-MM-DD",
        help="Date the data was retrieved [default: the one --from's snapshot.json records for its "
        "index (index_dates), else the snapshot's retrieval date].",
    ),
    click.option(
        "--updated",
        metavar="YYYY-MM-DD",
        help="Date the file is written [default: the one --from's snapshot.json records for its "
        "index (index_dates), else --retrieved].",
    ),
    click.option(
        "--all-tasks",
        is_flag=True,
        help="Build one index per task (LLM, multimodal and diffusion), as "
        "tasks/<task>/index.json beside --out (which is not written).",
    ),
    *(
        click.option(
            extra.flag,
            extra.keyword,
            type=click.Choice(extra.choices),
            multiple=True,
            help=extra.help,
        )
        if extra.choices
        else click.option(extra.flag, is_flag=True, help=extra.help)
        for extra in EXTRAS.values()
        if extra.flag
    ),
    carbon_option,
    FETCHES_AND_REPLACES,
)

REGENERATE_OPTIONS = stacked(
    source_option(settings.LIVE),
    task_option,
    deadline_option,
    deadline_s_option,
    out_option,
    exit_code_option("the index"),
    date_option,
    click.option(
        "--lock-timeout",
        type=click.FloatRange(min=0),
        default=settings.LOCK_TIMEOUT_SECONDS,
        show_default=True,
        help="Seconds to wait for another regeneration of the same --out to finish.",
    ),
    former_option("--snapshot", "--vendored", click.Path(path_type=Path)),
    path_option(
        "--vendored",
        "vendored",
        help="The vendored snapshot to keep as the input of --out: replaced by the fetched one, "
        "together with the index, when upstream's files changed (created if missing). [default: "
        f"{settings.VENDORED_SNAPSHOT} when --out is {settings.DEFAULT_OUT}; with another --out, "
        "none is kept]",
    ),
    FETCHES_AND_REPLACES,
)

REFRESH_CARBON_OPTIONS = stacked(
    former_option("--snapshot", "--vendored", click.Path(path_type=Path)),
    path_option(
        "--vendored",
        default=settings.CARBON_SNAPSHOT,
        help="The vendored carbon snapshot, replaced whole when upstream's file changed.",
    ),
    path_option(
        "--changelog-dir",
        help="Where carbon.changelog.json and the CHANGELOG.md entry go [default: the folder of "
        f"{settings.DEFAULT_OUT}].",
    ),
    exit_code_option("the snapshot"),
    date_option,
    FETCHES_AND_REPLACES,
)

AUDIT_OPTIONS = stacked(
    click.option(
        "--published",
        default=settings.DEFAULT_OUT,
        show_default=True,
        help="The published index (or impacts.json) to check: a file, or an https:// URL where it "
        f"is served ({settings.DEFAULT_OUT}{INSTALLED_COPY}: the published index).",
    ),
    click.option(
        "--from",
        "source",
        help="Rebuild from this snapshot directory, upstream URL or 'live' [default: the "
        f"vendored snapshot ({settings.VENDORED_SNAPSHOT}{INSTALLED_COPY}) when the published file "
        "records its dates, else the upstream commit current at the published source.retrieved].",
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
PAGE_INPUTS = stacked(index_option, source_option(settings.VENDORED_SNAPSHOT))
REPORT_OPTIONS = stacked(
    PAGE_INPUTS,
    path_option(
        "--out",
        default=settings.DEFAULT_REPORT_PAGE,
        help="The page to write.",
    ),
    path_option(
        "--png",
        help="Also render the page's charts to this PNG, e.g. docs/report.png. Needs the optional "
        "extra vl-convert-python: pip install 'energy-index[png]'.",
    ),
    carbon_option,
    FETCHES_AND_REPLACES,
)

SITE_OPTIONS = stacked(
    PAGE_INPUTS,
    path_option(
        "--out",
        default=settings.DEFAULT_SITE,
        help="The site directory, replaced whole.",
    ),
    carbon_option,
    cache_option,
    FORCE_OPTION,
    network_options,
)


def _load(context: click.Context, param: click.Parameter, value: Any) -> Any:
    """A load (tokens or requests per second, tokens per request) as typed, read by the one
    grammar of a typed number (model.NUMBER_TEXT, the report page's too): text that is an
    integer stays one, so that a refusal shows 0 and not 0.0, and text that is no number goes on
    as text, for the API to refuse in its words (click's FLOAT said "is not a valid float")."""
    try:
        return typed_number(value)
    except (TypeError, ValueError):
        return value


def load_option(flag: str, help: str) -> Callable[[F], F]:
    return click.option(flag, metavar="FLOAT", callback=_load, help=help)


PLAN_OPTIONS = stacked(
    load_option(
        "--tokens-per-second",
        "The total load, in output tokens per second (or give --requests-per-second).",
    ),
    load_option(
        "--requests-per-second",
        "The total load in requests per second, × --output-tokens-per-request.",
    ),
    load_option(
        "--output-tokens-per-request",
        "Output tokens per request [default: each family's measured mean output length].",
    ),
    load_option(
        "--images-per-second",
        "The total load of a text-to-image task, in images per second.",
    ),
    load_option(
        "--videos-per-hour",
        "The total load of a text-to-video task, in videos per hour.",
    ),
    deadline_option,
    itl_statistic_option,
    click.option(
        "--deadline-s",
        type=click.UNPROCESSED,
        metavar="S",
        help="Batch latency deadline in seconds, inclusive, of a diffusion task (text-to-image, "
        "text-to-video): the latency target each family's configurations meet [default: the "
        "leaderboard's default of the task]. Refused for a token task, as --itl-deadline-ms and "
        "--itl-statistic other than their defaults are for a diffusion task.",
    ),
    click.option(
        "--max-utilization",
        type=click.UNPROCESSED,  # as typed, to _load: click's FLOAT took 0.8 and _load's int, 0
        metavar="FLOAT",
        callback=_load,
        default=settings.DEFAULT_MAX_UTILIZATION,
        help="The share of its family's fastest measured configuration meeting the target that a "
        "server may carry: 0.8 keeps each server 20 % below it, room for bursts (not a spare "
        "server: when one of n fails, the others carry n/(n-1) times their load) "
        f"[default: {settings.DEFAULT_MAX_UTILIZATION:g}, the measured maximum; from "
        f"{settings.PLAN_HIGH_UTILIZATION:g} on, a plan says so].",
    ),
    click.option(
        "--model",
        help="Only this model: its nickname, model id or slug, any case (energy-index names "
        "lists them).",
    ),
    click.option("--gpu", help="Only this GPU type (e.g. B200; energy-index names lists them)."),
    click.option(
        "--country",
        "countries",
        multiple=True,
        help="Estimated carbon for this country (ISO 3166-1 alpha-3, e.g. FRA); repeat for several "
        "[default: every country of --carbon, in --json and --csv only].",
    ),
    task_option,
    source_option(settings.VENDORED_SNAPSHOT),
    carbon_option,
    click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON."),
    click.option(
        "--csv", "as_csv", is_flag=True, help="Print the plan and its alternative as CSV."
    ),
    cache_option,
    network_options,
)

NAMES_OPTIONS = stacked(
    click.option(
        "--task",
        help="Only this task [default: every task with an index that the snapshot holds].",
    ),
    source_option(settings.VENDORED_SNAPSHOT),
    click.option("--json", "as_json", is_flag=True, help="Print the names as JSON."),
    cache_option,
    network_options,
)

VALIDATE_OPTIONS = stacked(
    click.argument("path", type=click.Path(path_type=Path)),
)
