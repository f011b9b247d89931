"""Energy per response: each index pick's energy per token times its output-length distribution.

A *response* here is the output tokens of one request: energy per response = energy per output
token × output tokens. Prompt processing is not added: upstream measures energy per token at
steady state, with prefill already inside it (amortised), as its own energy_per_request_joules
is energy per token × average output length.

Upstream publishes, per model and task (``public/data/models/<org>__<model>__<task>.json``), the
output-length distribution of every configuration as a histogram (``bins``: edges, ``counts``).
A quantile of it is read off the histogram's cumulative distribution, linear within a bin (the
lengths are taken as spread evenly over the bin): the p-th quantile is the length below which a
fraction p of the requests fall. The mean is not read off the histogram: it is the
configuration's own ``avg_output_len``, and the energy it gives must equal the task file's
``energy_per_request_joules`` (``mean_check``): a check, not an assumption.

A model file that cannot be read leaves its picks without figures, each with the reason; it
never stops a build, since the index does not depend on it.

The quick reading (``_quickly_parsed``, msgspec) is here for the performance round's build time
(docs/performance.md: per-model files read with msgspec); tests/test_responses.py holds that it
gives what the careful reading gives, or declines. It is the one quick reader of a model file.
"""

from __future__ import annotations

import math
import operator
import sys
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import Any, cast

import msgspec
import polars as pl

from energy_index.errors import UpstreamFormatError, shown
from energy_index.settings import RESPONSE_QUANTILES
from energy_index.steps.derive import JOULES_PER_WATT_HOUR, row_id, row_ids
from energy_index.steps.validate import upstream_json

# Relative tolerance of "mean energy per response = the task file's energy_per_request_joules":
# both are energy per token × average output length, so only float noise may separate them.
MEAN_CHECK_RTOL = 1e-6
MATCHED_KEY = ("gpu_model", "num_gpus", "max_num_seqs")
# Bins of one output-length histogram that are read: upstream's have 50. Each pick's histogram
# is copied into responses.json, and 10^7 bins would put some 100 MB there per pick.
MAX_BINS = 10_000
# Figures of a configuration this stage does not use, read for the data checks (steps.checks):
# optional, and a finite number when present.
LATENCIES = ("median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms")
OTHER_FIGURES = (
    "energy_per_request_joules",
    "avg_batch_size",
    "avg_power_watts",
    "output_throughput_tokens_per_sec",
    *LATENCIES,
)
# The fields of a configuration this stage reads, with their types: required; a float may be
# written as an integer, and must be finite and > 0. Declared once for both readers.
REQUIRED: tuple[tuple[str, type], ...] = (
    ("gpu_model", str), ("num_gpus", int), ("max_num_seqs", int),
    ("energy_per_token_joules", float), ("avg_output_len", float),
)  # fmt: skip
# The model's own fields, also compared with the task file's: optional.
MODEL_NUMBERS = ("total_params_billions", "activated_params_billions")
MODEL_TEXTS = ("weight_precision",)


class ModelFileProblem(ValueError):
    """A per-model file that does not have the shape this stage reads (the reason, in words)."""


@dataclass(frozen=True)
class Histogram:
    """Bin edges (one more than the counts, increasing) and the requests in each bin."""

    edges: tuple[float, ...]
    counts: tuple[int, ...]

    @property
    def requests(self) -> int:
        return sum(self.counts)

    def quantile(self, fraction: float) -> float:
        """The length below which ``fraction`` of the requests fall, linear within a bin."""
        cumulative = list(accumulate(self.counts))
        target = fraction * cumulative[-1]
        # The first bin whose cumulative count reaches the target (an empty bin never does).
        index = bisect_left(cumulative, target)
        below = cumulative[index - 1] if index else 0
        share = (target - below) / self.counts[index] if self.counts[index] else 0.0
        low, high = self.edges[index], self.edges[index + 1]
        return low + share * (high - low)


@dataclass(frozen=True)
class ModelConfiguration:
    """One configuration of a per-model file: its key, figures and output-length histogram."""

    gpu_model: str
    num_gpus: int
    max_num_seqs: int
    energy_per_token_joules: float
    avg_output_len: float
    histogram: Histogram
    # Each of OTHER_FIGURES the file gives (not null), as a float.
    figures: Mapping[str, float] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ModelFile:
    model_id: str
    task: str
    configurations: tuple[ModelConfiguration, ...]
    # Each of MODEL_NUMBERS (as a float) and MODEL_TEXTS the file gives (not null).
    details: Mapping[str, float | str] = field(default_factory=dict, hash=False)


def parsed_model_file(content: bytes) -> ModelFile:
    """A per-model file's configurations; ModelFileProblem says what is wrong, by field.

    It is read as strictly as a task file (``steps.validate.upstream_json``): a key repeated in
    one object, an integer beyond a float, a lone UTF-16 surrogate are each a problem.
    """
    # A snapshot's file of 1 MiB or more comes mapped (io/snapshots.py), and a mapping has no
    # count(): a per-model file that large stopped the build with an AttributeError.
    content = content if isinstance(content, bytes) else bytes(content)
    return _quickly_parsed(content) or _carefully_parsed(content)


# The quick way (issue #16: a tenth of the build on the real file, 60 ms, went to reading these
# with json and checking each bin in Python): msgspec decodes the fields read into their types,
# and the rules are checked a list at a time. A file it does not vouch for is read the careful
# way, which names what is wrong: the quick way only ever returns what that one would.
class _QuickHistogram(msgspec.Struct):
    bins: list[float]
    counts: list[int]


_QuickConfiguration = msgspec.defstruct(
    "_QuickConfiguration",
    [
        *REQUIRED,
        ("output_length_distribution", _QuickHistogram),
        *((name, float | None, None) for name in OTHER_FIGURES),
    ],
)
_QuickModelFile = msgspec.defstruct(
    "_QuickModelFile",
    [
        ("model_id", str),
        ("task", str),
        ("configurations", list[_QuickConfiguration]),  # type: ignore[valid-type]
        *((name, float | None, None) for name in MODEL_NUMBERS),
        *((name, str | None, None) for name in MODEL_TEXTS),
    ],
)


def _quickly_parsed(content: bytes) -> ModelFile | None:
    try:
        whole = msgspec.json.decode(content)
        document: Any = msgspec.convert(whole, _QuickModelFile)
        # msgspec, like json.loads, keeps the last of a key repeated in one object, and says
        # nothing. A file's quote characters are two per key and per text value, and more for
        # each dropped key (or a \" in a text): the count vouches for the file (as
        # steps.validate does for a task file), else the careful way names the key.
        if content.count(b'"') != 2 * _keys_and_texts(whole):
            return None
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, OverflowError):
        return None
    configurations = []
    for item in document.configurations:
        edges, counts = item.output_length_distribution.bins, item.output_length_distribution.counts
        figures = (item.energy_per_token_joules, item.avg_output_len)
        if not (
            all(map(math.isfinite, figures))
            and min(figures) > 0
            and 0 < len(counts) <= MAX_BINS
            and len(edges) == len(counts) + 1
            and all(map(math.isfinite, edges))
            and min(edges) >= 0
            and all(map(operator.lt, edges, edges[1:]))
            and min(counts) >= 0
            and sum(counts)
        ):
            return None
        configurations.append(
            ModelConfiguration(
                **{name: getattr(item, name) for name, _ in REQUIRED},
                histogram=Histogram(tuple(edges), tuple(counts)),
                figures=_given(item, OTHER_FIGURES),
            )
        )
    details = _given(document, (*MODEL_NUMBERS, *MODEL_TEXTS))
    return ModelFile(document.model_id, document.task, tuple(configurations), details)


def _given(item: Any, names: Sequence[str]) -> dict[str, Any]:
    return {name: value for name in names if (value := getattr(item, name)) is not None}


_LARGEST = sys.float_info.max
_NUMBERS = frozenset({int, float, bool})


def _keys_and_texts(value: Any) -> int:
    """The keys and text values in a decoded document. OverflowError on an integer beyond a
    float, which msgspec keeps where it decodes no type and the careful way refuses."""
    if isinstance(value, dict):
        return len(value) + sum(map(_keys_and_texts, value.values()))
    if isinstance(value, list):
        # A list of numbers (most are: the histograms) is bounded and counted at once.
        if value and set(map(type, value)) <= _NUMBERS:
            if min(value) < -_LARGEST or max(value) > _LARGEST:
                raise OverflowError
            return 0
        return sum(map(_keys_and_texts, value))
    if isinstance(value, int) and abs(value) > _LARGEST:
        raise OverflowError
    return isinstance(value, str)


def _carefully_parsed(content: bytes) -> ModelFile:
    try:
        document = upstream_json(content, path="")
    except UpstreamFormatError as error:
        raise ModelFileProblem(error.problem) from None
    if not isinstance(document, dict):
        raise ModelFileProblem("not a JSON object")
    model_id, task = document.get("model_id"), document.get("task")
    if not isinstance(model_id, str) or not isinstance(task, str):
        raise ModelFileProblem(
            f"model_id and task must be text, got {shown(model_id, quote=True)} and "
            f"{shown(task, quote=True)}"
        )
    items = document.get("configurations")
    if not isinstance(items, list):
        raise ModelFileProblem(f"configurations: expected a list, got {shown(items, quote=True)}")
    details: dict[str, float | str] = {**_numbers(document, MODEL_NUMBERS, "")}
    for name in MODEL_TEXTS:
        value = document.get(name)
        if value is not None and not isinstance(value, str):
            raise ModelFileProblem(f"{name}: expected str, got {shown(value, quote=True)}")
        if value is not None:
            details[name] = value
    configurations = tuple(_configuration(item, n) for n, item in enumerate(items))
    return ModelFile(model_id, task, configurations, details)


def _numbers(item: Mapping[str, Any], names: Sequence[str], where: str) -> dict[str, float]:
    """Each of ``names`` the object gives (not null), a finite number."""
    found = {}
    for name in names:
        value = item.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ModelFileProblem(
                f"{where}{name}: expected a number, got {shown(value, quote=True)}"
            )
        if not math.isfinite(value):
            raise ModelFileProblem(
                f"{where}{name}: must be a finite number, got {shown(value, quote=True)}"
            )
        found[name] = float(value)
    return found


def _configuration(item: Any, number: int) -> ModelConfiguration:
    where = f"configurations[{number}]"
    if not isinstance(item, dict):
        raise ModelFileProblem(f"{where}: expected an object")
    values: dict[str, Any] = {}
    for name, kind in REQUIRED:
        value: Any = item.get(name)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ModelFileProblem(
                f"{where}.{name}: expected {kind.__name__}, got {shown(value, quote=True)}"
            )
        if kind is float and not (math.isfinite(cast(float, value)) and cast(float, value) > 0):
            raise ModelFileProblem(f"{where}.{name}: must be a finite number > 0")
        values[name] = value
    return ModelConfiguration(
        **values,
        histogram=_histogram(item.get("output_length_distribution"), where),
        figures=_numbers(item, OTHER_FIGURES, f"{where}."),
    )


def _histogram(value: Any, where: str) -> Histogram:
    where = f"{where}.output_length_distribution"
    if not isinstance(value, dict):
        raise ModelFileProblem(f"{where}: expected an object with bins and counts")
    edges, counts = value.get("bins"), value.get("counts")
    if not (isinstance(edges, list) and isinstance(counts, list)):
        raise ModelFileProblem(f"{where}: bins and counts must be lists")
    if len(edges) != len(counts) + 1 or not counts:
        raise ModelFileProblem(
            f"{where}: {len(edges)} bin edges for {len(counts)} counts (expected one more edge)"
        )
    if len(counts) > MAX_BINS:
        raise ModelFileProblem(f"{where}: {len(counts)} bins, more than the {MAX_BINS} read")
    if not all(
        isinstance(e, int | float) and not isinstance(e, bool) and math.isfinite(e) and e >= 0
        for e in edges
    ):
        raise ModelFileProblem(f"{where}.bins: every edge must be a finite number >= 0")
    if any(b <= a for a, b in pairwise(edges)):
        raise ModelFileProblem(f"{where}.bins: edges must increase")
    # The count itself and its place: one bad count of fifty is then found without a search.
    bad = next((n for n, c in enumerate(counts) if not _is_count(c)), None)
    if bad is not None:
        raise ModelFileProblem(
            f"{where}.counts[{bad}]: {shown(counts[bad], quote=True)}, where every count must be "
            "an integer >= 0"
        )
    if not sum(counts):
        raise ModelFileProblem(f"{where}.counts: no request counted")
    return Histogram(tuple(float(e) for e in edges), tuple(counts))


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def response_energy(
    picks: pl.DataFrame | Sequence[Mapping[str, Any]],
    model_files: Mapping[str, ModelFile | str],
    *,
    quantiles: Sequence[float] = RESPONSE_QUANTILES,
) -> list[dict[str, Any]]:
    """Per pick (a selected configuration, with the task file's columns): output tokens and Wh
    per response at each quantile and the mean, the mean check, and the histogram; or, when its
    model has no usable file (``model_files[model_id]`` is then the reason, in words), none of
    them and ``skipped`` saying why.

    ``picks`` is a frame of them (the selection's) or a sequence of mappings. From a frame, the
    names and keys are read a column at a time (row_id by ``derive.row_ids``), and only a pick
    whose model has a file becomes a mapping.
    """
    if isinstance(picks, pl.DataFrame):
        keys = picks.select(row_ids(picks), "model_id", *MATCHED_KEY).iter_rows()
        rows: Any = ((keys, number) for number, keys in enumerate(keys))
    else:
        rows = (((row_id(p), p["model_id"], *(p[k] for k in MATCHED_KEY)), p) for p in picks)
    results = []
    for (name, model_id, gpu, num_gpus, max_num_seqs), pick in rows:
        entry: dict[str, Any] = {
            "row_id": name,
            "model_id": model_id,
            "gpu": gpu,
            "num_gpus": num_gpus,
            "max_num_seqs": max_num_seqs,
        }
        found = model_files.get(model_id, "the snapshot has no per-model file for it")
        if not isinstance(found, ModelFile):
            results.append({**entry, "skipped": found})
            continue
        if isinstance(pick, int):
            pick = cast(pl.DataFrame, picks).row(pick, named=True)
        configuration = _matching(pick, found)
        if configuration is None:
            results.append({**entry, "skipped": "its per-model file lacks this configuration"})
            continue
        results.append({**entry, **_figures(pick, configuration, quantiles)})
    return results


def _matching(pick: Mapping[str, Any], model_file: ModelFile) -> ModelConfiguration | None:
    # A repeated run shares the key: its energy per token tells the two apart.
    for configuration in model_file.configurations:
        if all(getattr(configuration, k) == pick[k] for k in MATCHED_KEY) and (
            configuration.energy_per_token_joules == pick["energy_per_token_joules"]
        ):
            return configuration
    return None


def _figures(
    pick: Mapping[str, Any], configuration: ModelConfiguration, quantiles: Sequence[float]
) -> dict[str, Any]:
    joules = configuration.energy_per_token_joules
    histogram = configuration.histogram
    tokens = {_name(q): histogram.quantile(q) for q in quantiles}
    tokens["mean"] = configuration.avg_output_len
    mean_joules = joules * configuration.avg_output_len
    upstream = pick["energy_per_request_joules"]
    difference = abs(mean_joules - upstream) / upstream
    return {
        "output_tokens": {name: round(value, 1) for name, value in tokens.items()},
        "wh_per_response": {
            name: round(joules * value / JOULES_PER_WATT_HOUR, 6) for name, value in tokens.items()
        },
        "mean_check": {
            "energy_per_request_joules": round(upstream, 4),
            "energy_per_token_times_avg_output_len": round(mean_joules, 4),
            "relative_difference": float(f"{difference:.3g}"),
            "holds": difference <= MEAN_CHECK_RTOL,
        },
        "requests": histogram.requests,
        "histogram": {"bins": list(histogram.edges), "counts": list(histogram.counts)},
    }


def _name(fraction: float) -> str:
    """0.1 → ``p10``, 0.99 → ``p99``."""
    return f"p{round(fraction * 100):d}"
