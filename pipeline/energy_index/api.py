"""The Python API: one function per command, with the command's options as keyword arguments
and their defaults (from settings.py), paths as ``str`` or ``Path``, and typed results.

The command line parses its options, calls one of these functions and prints the result;
tests/test_public_api.py checks that every option of every command is a keyword argument of its
function, with the same default. Heavy libraries are imported when a function is called, so that
``import energy_index`` stays as light as ``energy-index --help``.

    >>> import energy_index
    >>> energy_index.audit(published=energy_index.published_index()).identical
    True
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from energy_index import settings
from energy_index.errors import SourceError, UsageError
from energy_index.io.packaged import at_checkout, installed_copy, located
from energy_index.model import (  # the checks are shared with the steps: one check each
    EXTRAS,
    Access,
    NetworkSettings,
    Target,
    checked_day,
    checked_deadline,
    checked_deadlines,
    checked_load,
    checked_max_utilization,
    checked_name,
    checked_statistic,
)

if TYPE_CHECKING:
    from energy_index.documents.compare import Audit
    from energy_index.flows.carbon import CarbonRefresh
    from energy_index.flows.impacts import ImpactsAudit
    from energy_index.flows.records import Build
    from energy_index.flows.regenerate import Regenerated

PathLike = str | os.PathLike[str]
Notify = Callable[[str], None]


@dataclass(frozen=True)
class Built:
    """What ``build`` made: the index document and its build report, and the files written
    (none when ``out`` is None). With ``all_tasks``, ``tasks`` holds each task's build and the
    document is that of ``task``."""

    document: dict[str, Any]
    report: dict[str, Any]
    files: tuple[Path, ...] = ()
    tasks: Mapping[str, Built] = field(default_factory=dict)


@dataclass(frozen=True)
class Page:
    """What ``report`` wrote: the page, its size in bytes, and the PNG of its charts if asked."""

    path: Path
    size: int
    png: Path | None = None


@dataclass(frozen=True)
class Plan:
    """What ``plan`` found: the document (``as_json()``), the best family's plan (``best``) and
    the runner-up (``alternative``, None when no other family carries the load); ``lines()``
    is the command line's table, ``csv()`` its CSV."""

    document: dict[str, Any]

    @property
    def best(self) -> dict[str, Any]:
        plan: dict[str, Any] = self.document["plan"]
        return plan

    @property
    def alternative(self) -> dict[str, Any] | None:
        alternative: dict[str, Any] | None = self.document["alternative"]
        return alternative

    def lines(self) -> list[str]:
        from energy_index.documents.diffusion_plan import KIND, diffusion_plan_lines
        from energy_index.documents.plan import plan_lines

        lines = diffusion_plan_lines if self.document["kind"] == KIND else plan_lines
        return lines(self.document)

    def csv(self) -> bytes:
        from energy_index.documents.diffusion_plan import KIND, diffusion_plan_csv
        from energy_index.documents.plan import plan_csv

        csv = diffusion_plan_csv if self.document["kind"] == KIND else plan_csv
        return csv(self.document)

    def as_json(self) -> dict[str, Any]:
        return self.document


@dataclass(frozen=True)
class Names:
    """What ``names`` found: per task of a snapshot its models (nickname, model id, slug, GPU
    types) and GPU types (``as_json()``); ``lines()`` is the command line's table."""

    document: dict[str, Any]

    def lines(self) -> list[str]:
        from energy_index.documents.names import names_lines

        return names_lines(self.document)

    def as_json(self) -> dict[str, Any]:
        return self.document


@dataclass(frozen=True)
class Site:
    """What ``site`` wrote: the folder, and every file in it (relative path → bytes)."""

    path: Path
    files: Mapping[str, bytes]


def _built(result: Build) -> Built:
    return Built(document=result.document, report=result.report, files=result.written)


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _deadline_s(value: Any) -> float | None:
    """A diffusion task's deadline as given (None: the task's default), checked as seconds."""
    if value is None:
        return None
    return checked_deadline(value, unit="seconds", parameter="deadline_s", listed=False)


def _path(value: PathLike | None, *, parameter: str) -> Path | None:
    """A path given as text or Path; text ending in a separator names a directory, which no
    parameter taking a file accepts (Path() would drop the slash)."""
    if value is None:
        return None
    if isinstance(value, str) and value.endswith(("/", os.sep)):
        raise UsageError(f"{value!r} names a directory; name a file in it", parameter=parameter)
    return Path(value)


def _source(value: PathLike, default: str = settings.VENDORED_SNAPSHOT) -> str:
    """``source`` (or ``published``) as the flows take it: a path, an upstream URL, or 'live';
    the ``default`` is the installed copy where the working directory has none."""
    text = os.fspath(value)  # a URL stays text: Path() would fold its '//'
    return os.fspath(located(text, default=default)) if text == default else text


def _carbon(value: PathLike) -> Path:
    return located(value, default=settings.CARBON_SNAPSHOT)


def _access(
    cache: PathLike,
    network: NetworkSettings | None,
    *,
    today: str | None = None,
    notify: Notify | None = None,
) -> Access:
    for name in ("timeout", "backoff", "timeout_total"):
        # click's ranges let NaN through (no comparison with it is true), as the API would.
        value = getattr(network, name, None)
        if isinstance(value, float) and math.isnan(value):
            raise UsageError(f"{value} is not a number of seconds", parameter=name)
    return Access(
        cache=at_checkout(cache, default=settings.DEFAULT_CACHE),
        # The command's --network-timeout-total counts from now, however long ago ``network``
        # was made.
        network=replace(network or NetworkSettings(), started=time.monotonic()),
        today=checked_day(today, parameter="today") or _today(),
        notify=notify or (lambda line: None),
    )


def build(
    *,
    source: PathLike = settings.VENDORED_SNAPSHOT,
    task: str = settings.DEFAULT_TASK,
    itl_deadline_ms: float | Iterable[float] = settings.DEFAULT_ITL_DEADLINE_MS,
    itl_statistic: str = settings.DEFAULT_ITL_STATISTIC,
    deadline_s: float | Iterable[float] | None = None,
    out: PathLike | None = settings.DEFAULT_OUT,
    retrieved: str | None = None,
    updated: str | None = None,
    all_tasks: bool = False,
    curves: bool = False,
    profiles: bool = False,
    extended: bool = False,
    formats: Iterable[str] = (),
    impacts: bool = False,
    carbon: PathLike = settings.CARBON_SNAPSHOT,
    responses: bool = False,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
    force: bool = False,
) -> Built:
    """``energy-index build``: build the index from ``source`` and write it, with its build
    report, to ``out`` (``out=None``: in memory, nothing written). A file at an output path that
    is not this tool's output of that kind is refused (UsageError) unless ``force``.

    ``source`` is a snapshot directory, or the upstream repository's URL (or 'live'), fetched
    into ``cache`` first. Several deadlines also write the deadline sweep; the index uses the
    largest. Dates not given come from the snapshot (see docs/design.md, *Dates*). A diffusion
    task (text-to-image, text-to-video) is picked under ``deadline_s``, seconds of batch latency
    (default: the task's; several also write its deadline sweep, the index using the largest);
    ``deadline_s`` for a token task is refused, as ``itl_deadline_ms`` and
    ``itl_statistic`` other than their defaults are for a diffusion task.
    """
    given = locals()  # the extras' keywords are read by name from model.EXTRAS
    from energy_index.flows.build import build_in_memory, build_index
    from energy_index.flows.records import BuildSettings, Extras

    deadlines = checked_deadlines(itl_deadline_ms)
    # A diffusion task's, in seconds: several also write its sweep; the index uses the largest.
    deadlines_s = (
        () if deadline_s is None
        else checked_deadlines(deadline_s, unit="seconds", parameter="deadline_s")
    )  # fmt: skip
    itl_statistic = checked_statistic(itl_statistic)
    build_settings = BuildSettings(
        task=task,
        itl_deadline_ms=max(deadlines),
        itl_statistic=itl_statistic,
        deadline_s=max(deadlines_s) if deadlines_s else None,
        retrieved=checked_day(retrieved, parameter="retrieved"),
        updated=checked_day(updated, parameter="updated"),
    )
    extras = Extras(
        flags=frozenset(keyword for keyword in EXTRAS if given.get(keyword)),
        deadlines_ms=deadlines,
        deadlines_s=deadlines_s,
        formats=tuple(formats),
        carbon=_carbon(carbon),
    )
    access = _access(cache, network, notify=notify)
    target = _path(out, parameter="out")
    target = None if target is None else at_checkout(target, default=settings.DEFAULT_OUT)
    if target is None:
        if all_tasks or extras.flags:
            raise UsageError("extra files and all tasks need an output path", parameter="out")
        return _built(build_in_memory(_source(source), settings=build_settings, access=access))

    if all_tasks:
        from energy_index.flows.tasks import build_every_task  # not loaded by a one-task build

        results = build_every_task(
            _source(source),
            out_dir=target.parent / "tasks",
            settings=build_settings,
            extras=extras,
            access=access,
            force=force,
        )
        tasks = {name: _built(result) for name, result in results.items()}
        first = tasks.get(task) or next(iter(tasks.values()))
        files = tuple(path for built in tasks.values() for path in built.files)
        return Built(document=first.document, report=first.report, files=files, tasks=tasks)
    result = build_index(
        _source(source),
        out=target,
        settings=build_settings,
        extras=extras,
        access=access,
        force=force,
    )
    return _built(result)


def audit(
    *,
    published: PathLike = settings.DEFAULT_OUT,
    source: PathLike | None = None,
    at: str | None = None,
    carbon: PathLike = settings.CARBON_SNAPSHOT,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
) -> Audit | ImpactsAudit:
    """``energy-index audit``: rebuild in memory with the published file's task and deadline,
    and compare. ``published`` is a file or an https:// URL. The rebuild is from ``source``
    when given, from upstream's commit ``at`` when given, else from the vendored snapshot when
    the published file records its dates (offline), else from the upstream commit current at
    the published file's ``source.retrieved``. ``.basis`` says which and why; ``.identical``
    whether anything but the volatile dates differs; ``.lines()`` lists each difference. A
    published impacts.json is compared with impacts rebuilt with the carbon snapshot ``carbon``.
    The default ``published`` is ``output/index.json`` here, or, where there is none (an empty
    folder), the published index the package carries."""
    from energy_index.flows.audit import audited

    return audited(
        _source(published, default=settings.DEFAULT_OUT),
        source=_source(source) if source is not None else None,
        at=at,
        vendored=located(settings.VENDORED_SNAPSHOT, default=settings.VENDORED_SNAPSHOT),
        access=_access(cache, network, notify=notify),
        carbon=_carbon(carbon),
    )


def regenerate(
    *,
    source: PathLike = settings.LIVE,
    task: str = settings.DEFAULT_TASK,
    itl_deadline_ms: float = settings.DEFAULT_ITL_DEADLINE_MS,
    deadline_s: float | None = None,
    out: PathLike = settings.DEFAULT_OUT,
    today: str | None = None,
    lock_timeout: float = settings.LOCK_TIMEOUT_SECONDS,
    vendored: PathLike | None = None,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
    force: bool = False,
) -> Regenerated:
    """``energy-index regenerate``: fetch ``source``, rebuild, and replace the index at ``out``
    (and the vendored snapshot ``vendored``; by default the vendored snapshot when ``out`` is
    the default output; both default paths, in a checkout's subfolder, the checkout's) only if
    upstream changed. ``today`` stamps a change (default: today,
    UTC). ``.changelog`` is None when nothing changed. A file where an output goes that is not
    this tool's output of that kind is refused (UsageError) unless ``force``. A diffusion task
    (text-to-image, text-to-video) is picked under ``deadline_s``, seconds of batch latency
    (default: the task's), as ``build`` picks it."""
    from energy_index.flows.records import BuildSettings
    from energy_index.flows.regenerate import regenerate_index

    target = _path(out, parameter="out")
    assert target is not None
    target = at_checkout(target, default=settings.DEFAULT_OUT)
    snapshot = (
        at_checkout(vendored, default=settings.VENDORED_SNAPSHOT) if vendored is not None else None
    )
    default_out = at_checkout(settings.DEFAULT_OUT, default=settings.DEFAULT_OUT)
    if snapshot is None and os.path.abspath(target) == os.path.abspath(default_out):
        # the default output's input; no other's
        snapshot = at_checkout(settings.VENDORED_SNAPSHOT, default=settings.VENDORED_SNAPSHOT)
    return regenerate_index(
        _source(source),
        out=target,
        vendored=snapshot,
        settings=BuildSettings(
            task=task,
            itl_deadline_ms=checked_deadline(itl_deadline_ms),
            deadline_s=_deadline_s(deadline_s),
        ),
        lock_timeout=lock_timeout,
        access=_access(cache, network, today=today, notify=notify),
        force=force,
    )


def fetch(
    *,
    to: PathLike,
    tasks: Iterable[str] = (settings.DEFAULT_TASK,),
    repository: str = settings.UPSTREAM_URL,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
    force: bool = False,
) -> Path:
    """``energy-index fetch``: bring the snapshot directory ``to`` up to date with upstream's
    files of ``tasks``; returns ``to``. ``force``: overwrite files changed by hand."""
    from energy_index.flows.fetch import fetch_snapshot

    return fetch_snapshot(
        repository,
        to=Path(to),
        tasks=tuple(tasks),
        access=_access(settings.DEFAULT_CACHE, network, notify=notify),
        force=force,
    )


def refresh_carbon(
    *,
    vendored: PathLike = settings.CARBON_SNAPSHOT,
    changelog_dir: PathLike | None = None,
    today: str | None = None,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
    force: bool = False,
) -> CarbonRefresh:
    """``energy-index refresh-carbon``: fetch CodeCarbon's energy mix; when it changed, write
    the changelog into ``changelog_dir`` (default: the default index's folder) and replace the
    vendored carbon snapshot ``vendored`` (both default paths, in a checkout's subfolder, the
    checkout's). A file in ``changelog_dir`` where a changelog goes
    that is not this tool's is refused (UsageError) unless ``force``."""
    from energy_index.flows.carbon import refresh_carbon as refreshed

    return refreshed(
        at_checkout(vendored, default=settings.CARBON_SNAPSHOT),
        out_dir=Path(changelog_dir)
        if changelog_dir is not None
        else at_checkout(settings.DEFAULT_OUT, default=settings.DEFAULT_OUT).parent,
        access=_access(cache, network, today=today, notify=notify),
        force=force,
    )


def plan(
    *,
    tokens_per_second: float | None = None,
    requests_per_second: float | None = None,
    output_tokens_per_request: float | None = None,
    images_per_second: float | None = None,
    videos_per_hour: float | None = None,
    itl_deadline_ms: float = settings.DEFAULT_ITL_DEADLINE_MS,
    itl_statistic: str = settings.DEFAULT_ITL_STATISTIC,
    deadline_s: float | None = None,
    max_utilization: float = settings.DEFAULT_MAX_UTILIZATION,
    model: str | None = None,
    gpu: str | None = None,
    countries: Iterable[str] = (),
    task: str = settings.DEFAULT_TASK,
    source: PathLike = settings.VENDORED_SNAPSHOT,
    carbon: PathLike = settings.CARBON_SNAPSHOT,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
) -> Plan:
    """``energy-index plan``: the replicas that carry a load with the lowest upper bound of
    total GPU power, and their energy, read from the measured curves of ``source``'s task
    (docs/plan.md). The load is ``tokens_per_second`` (output tokens/s) or
    ``requests_per_second`` × ``output_tokens_per_request`` (default: each family's measured
    mean output length); the latency target is ``itl_statistic`` ≤ ``itl_deadline_ms``; no
    replica carries more than ``max_utilization`` (0.1 to 1; default 1: the measured maximum)
    of its family's fastest configuration meeting the target (to a relative 1e-9, the tolerance
    by which a load is a measured throughput: ``utilization`` may exceed it by that much);
    ``model`` and ``gpu`` narrow the families. Estimated facility energy and carbon
    (``countries``, ISO-3; default: every country of the carbon snapshot ``carbon``) stay apart
    from the figures read from measured points.
    A load that is not a positive finite number or too large, an unknown model, GPU or country,
    or a target no family meets raises UsageError naming the value.

    A diffusion task (text-to-image, text-to-video) takes its load as ``images_per_second`` or
    ``videos_per_hour`` and its target as ``deadline_s``, seconds of batch latency (default: the
    task's), by the same method (docs/plan.md); a token task's load or target given to it, or
    theirs to a token task, is refused naming it."""
    from energy_index.flows.plan import diffusion_plan, plan_at

    loads = {
        "tokens_per_second": tokens_per_second,
        "requests_per_second": requests_per_second,
        "output_tokens_per_request": output_tokens_per_request,
        "images_per_second": images_per_second,
        "videos_per_hour": videos_per_hour,
    }
    utilization = checked_max_utilization(max_utilization)
    diffusion = diffusion_plan(
        task, loads, itl_deadline_ms=itl_deadline_ms, itl_statistic=itl_statistic,
        deadline_s=deadline_s, max_utilization=utilization,
    )  # fmt: skip
    if diffusion is not None:
        return Plan(
            document=diffusion(
                _source(source),
                model=checked_name(model, "model"),
                gpu=checked_name(gpu, "gpu"),
                countries=_countries(countries),
                carbon=_carbon(carbon),
                access=_access(cache, network, notify=notify),
            )
        )
    return Plan(
        document=plan_at(
            _source(source),
            task=task,
            target=Target(
                checked_statistic(itl_statistic), checked_deadline(itl_deadline_ms), utilization
            ),
            load=checked_load(
                tokens_per_second=tokens_per_second,
                requests_per_second=requests_per_second,
                output_tokens_per_request=output_tokens_per_request,
            ),
            model=checked_name(model, "model"),
            gpu=checked_name(gpu, "gpu"),
            countries=_countries(countries),
            carbon=_carbon(carbon),
            access=_access(cache, network, notify=notify),
        )
    )


def names(
    *,
    task: str | None = None,
    source: PathLike = settings.VENDORED_SNAPSHOT,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
) -> Names:
    """``energy-index names``: the tasks of ``source`` (``task``: that one alone) and, per task,
    the models and GPU types the planner's curves hold, each model with every name ``plan``
    takes for it (nickname, model id, slug; any case)."""
    from energy_index.flows.names import snapshot_names

    return Names(
        document=snapshot_names(
            _source(source), task=checked_name(task, "task"),
            access=_access(cache, network, notify=notify),
        )
    )  # fmt: skip


def _countries(value: Any) -> tuple[Any, ...]:
    """``countries`` as the command line's repeated ``--country`` gives them: one code alone
    ("FRA") is that country, not its letters; None is the default (every country)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        return (value,)


def published_index() -> Path:
    """The published index the package carries: the committed build of its vendored snapshot
    (in a wheel, its copy; running from a checkout, the checkout's output/index.json, of which a
    wheel's copy is made). ``audit``, ``report`` and ``site`` read it by default where the
    working directory has no output/index.json; so does ``energy-index audit`` without
    ``--published``, whose first line names it."""
    copy = installed_copy(settings.DEFAULT_OUT)
    if copy is None:
        raise SourceError(
            "this installation of energy-index carries no published index "
            f"(energy_index/data/published/index.json, made from {settings.DEFAULT_OUT})"
        )
    return copy


def scrubbed_message(text: str) -> str:
    """``text`` as the command line prints an error: GITHUB_TOKEN scrubbed in every form a server
    may echo it, and every credential a URL may put in it masked (the scrub of io/http.py), whatever
    raised it: a URL given on the command line or echoed by a published copy is shown too.

    Example: ``scrubbed_message("https://h/x?access_token=s3cret: no")`` →
    ``"https://h/x?access_token=***: no"``.
    """
    from energy_index.io.http import scrubbed

    token = os.environ.get("GITHUB_TOKEN")
    return scrubbed(text, [token, token.strip()] if token else [])


class Validation(tuple[str, ...]):
    """What ``validate`` found: its problems (a tuple, empty when the file is valid),
    ``schema``, the schema the file was held to (``schemas/<name>``; empty for a ``kind`` this
    tool does not write), and ``rules``, what the rules beyond the schema it was held to are
    called ("the index rules"; empty for none)."""

    schema: str
    rules: str

    def __new__(cls, problems: Iterable[str], *, schema: str, rules: str = "") -> Validation:
        validation = super().__new__(cls, problems)
        validation.schema = schema
        validation.rules = rules
        return validation


def validate(path: PathLike) -> Validation:
    """``energy-index validate``: how the file at ``path`` breaks the schema of its kind (every
    file this tool writes says what it is: the index by its version, the build report by its
    title, the others by ``kind``) and the rules beyond it of an index of either kind, latency
    profiles, a deadline sweep, curves and a site model file; empty when it is valid. The
    first MAX_PROBLEMS are described, and a last line counts the others ("… and 99900 more
    problem(s)"). A ``kind`` this tool does not write is refused as a problem."""
    from energy_index.flows.audit import file_problems, rules_of

    schema, problems = file_problems(Path(path))
    more = (f"… and {problems.more} more problem(s)",) if problems.more else ()
    return Validation(
        (*problems, *more), schema=f"schemas/{schema}" if schema else "", rules=rules_of(schema)
    )


def report(
    *,
    index: PathLike = settings.DEFAULT_OUT,
    source: PathLike = settings.VENDORED_SNAPSHOT,
    out: PathLike = settings.DEFAULT_REPORT_PAGE,
    png: PathLike | None = None,
    carbon: PathLike = settings.CARBON_SNAPSHOT,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
    force: bool = False,
) -> Page:
    """``energy-index report``: write the page documenting ``index`` (its build report beside
    it), with the stable configurations of ``source`` and the carbon snapshot ``carbon``, and
    its charts to ``png`` if given. A file at ``out`` that is not a page this tool wrote is
    refused (UsageError) unless ``force``."""
    from energy_index.flows.report import write_report_page

    page = at_checkout(out, default=settings.DEFAULT_REPORT_PAGE)
    picture = Path(png) if png is not None else None
    size = write_report_page(
        located(index, default=settings.DEFAULT_OUT),
        source=_source(source),
        out=page,
        png=picture,
        access=_access(cache, network, notify=notify),
        carbon=_carbon(carbon),
        force=force,
    )
    return Page(path=page, size=size, png=picture)


def site(
    *,
    index: PathLike = settings.DEFAULT_OUT,
    source: PathLike = settings.VENDORED_SNAPSHOT,
    out: PathLike = settings.DEFAULT_SITE,
    carbon: PathLike = settings.CARBON_SNAPSHOT,
    cache: PathLike = settings.DEFAULT_CACHE,
    network: NetworkSettings | None = None,
    notify: Notify | None = None,
    force: bool = False,
) -> Site:
    """``energy-index site``: write the static site (every task's page, the JSON API, the Data
    Package) to the folder ``out``, replaced whole. ``force``: overwrite files changed by hand.
    """
    from energy_index.flows.site import write_site

    folder = at_checkout(out, default=settings.DEFAULT_SITE)
    files = write_site(
        located(index, default=settings.DEFAULT_OUT),
        source=_source(source),
        out=folder,
        carbon=_carbon(carbon),
        access=_access(cache, network, notify=notify),
        force=force,
    )
    return Site(path=folder, files=files)
