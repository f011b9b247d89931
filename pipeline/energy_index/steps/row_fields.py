"""The published row, declared once: per field of an index row its name, where it comes from,
how it is converted and rounded, what the schema allows and what it means.

Everything that knows a row's fields is made from ``ROW_FIELDS``: ``steps/derive.py``'s
``index_row`` (the key order too), the row part of ``schemas/index.schema.json`` and the field
table of ``docs/design.md`` (both written by ``make docs``, drift-tested), the digits the report
page writes (``pages/configurations.py``), and the rounding of the same figures in the latency
profiles and the robustness figures. A new field is one line here, then ``make docs``.

Rounding is Python's ``round()`` on the full-precision float (round-half-even on the binary
value), applied in Python on the few selected rows rather than with polars' ``round``, which
rounds some halves differently (12.345 → 12.34 in polars, 12.35 in Python).

>>> ROW["wh_per_million_output_tokens"].value(0.215694)
59.91
>>> ROW["gpu_power_watts_total"].value(699.6)
700
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

JOULES_PER_WATT_HOUR = 3600
TOKENS_PER_MILLION = 1_000_000


def wh_per_million_tokens(joules_per_token: float) -> float:
    return joules_per_token * TOKENS_PER_MILLION / JOULES_PER_WATT_HOUR


@dataclass(frozen=True)
class RowField:
    """One field of an index row.

    ``source`` is the upstream column it is read from; ``computed`` names, in words, what a
    field made by ``index_row`` itself from several columns or the editorial labels is (its
    ``source`` is then the column it starts from, for the docs). ``convert`` turns the source
    value into the field's unit and ``conversion`` says so in words. ``places``: None, published
    as it is; 0, rounded to an integer; n, rounded to n decimal places. ``mirrors``: the field
    this one repeats under another name (same source, same value).
    """

    name: str
    source: str
    description: str
    schema: Mapping[str, Any]
    places: int | None = None
    convert: Callable[[Any], Any] | None = None
    conversion: str = ""
    computed: str = ""
    mirrors: str = ""
    # Present only in an index selected on it (a tail ITL statistic beside the median): absent
    # from the schema's required fields, and from a row at the default statistic, whose
    # published format is unchanged.
    optional: bool = False
    # round() with the field's places, resolved once (index_row runs it for every configuration
    # a report page carries); None: published as it is.
    rounding: Callable[[Any], Any] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rounding = None
        if self.places == 0:
            rounding = round
        elif self.places is not None:
            rounding = partial(round, ndigits=self.places)
        object.__setattr__(self, "rounding", rounding)

    def rounded(self, value: Any) -> Any:
        """A value already in this field's unit, rounded as the field is published."""
        return value if self.rounding is None else self.rounding(value)

    def value(self, source_value: Any) -> Any:
        """The published value of a source column's value: converted, then rounded."""
        convert = self.convert
        return self.rounded(source_value if convert is None else convert(source_value))

    def converted(self, column: Any) -> Any:
        """``convert`` applied to a polars expression of the source column (``derive.index_rows``
        derives a column at a time): ``float`` is a cast, any other conversion is arithmetic,
        which an expression takes as a number does, in the same order of operations."""
        if self.convert is None:
            return column
        return column.cast(float) if self.convert is float else self.convert(column)

    @property
    def digits(self) -> int | None:
        """The decimals a page writes the value with; None (integers, text): as it is."""
        return self.places or None


_SLUG = "^[a-z0-9]+(-[a-z0-9]+)*$"
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_COUNT = {"type": "integer", "minimum": 1}
_WATTS = {"type": "integer", "minimum": 0}

# The published key order is this order.
ROW_FIELDS: tuple[RowField, ...] = (
    RowField(
        "model",
        "nickname",
        "Model name as the leaderboard shows it (upstream nickname).",
        {"type": "string", "minLength": 1},
    ),
    RowField(
        "slug",
        "nickname",
        (
            "The model name lower-cased, each run of characters outside a-z0-9 turned into '-'; "
            "one longer than 64 characters is cut to its first 53 (less a trailing '-'), then '-'"
            " and the first 10 hex digits of the sha256 of the whole, so that it can name a file."
        ),
        {"type": "string", "maxLength": 64, "pattern": _SLUG},
        computed="slug of the nickname",
    ),
    RowField(
        "model_id",
        "model_id",
        "The model's Hugging Face id (upstream model_id).",
        {"type": "string", "pattern": "^[^/\\s]+/[^/\\s]+$"},
    ),
    RowField(
        "params_b",
        "total_params_billions",
        "Total parameters, in billions.",
        _POSITIVE,
        convert=float,
        conversion="as a float",
    ),
    RowField(
        "active_params_b",
        "activated_params_billions",
        "Parameters active per token, in billions (equal to params_b for dense models).",
        _POSITIVE,
        convert=float,
        conversion="as a float",
    ),
    RowField(
        "precision",
        "weight_precision",
        "Weight precision label (BF16, FP8, MXFP4).",
        {"type": "string", "pattern": "^[A-Z0-9]+$"},
        computed="its label in editorial.json's precision_labels",
    ),
    RowField(
        "gpu",
        "gpu_model",
        "GPU type (upstream gpu_model).",
        {"type": "string", "pattern": "^[A-Za-z0-9]+$"},
    ),
    RowField("num_gpus", "num_gpus", "GPUs serving the model in the chosen configuration.", _COUNT),
    RowField(
        "wh_per_million_output_tokens",
        "energy_per_token_joules",
        (
            "GPU energy per million output tokens in watt-hours: joules per token × 10⁶ / 3600, "
            "rounded to 2 places."
        ),
        _POSITIVE,
        places=2,
        convert=wh_per_million_tokens,
        conversion="× 10⁶ / 3600",
    ),
    RowField(
        "joules_per_output_token",
        "energy_per_token_joules",
        "Steady-state GPU energy per output token in joules, rounded to 7 places.",
        _POSITIVE,
        places=7,
    ),
    RowField(
        "median_itl_ms",
        "median_itl_ms",
        "Median inter-token latency of the chosen configuration in milliseconds, 1 place.",
        _POSITIVE,
        places=1,
    ),
    *(
        RowField(
            f"{statistic}_itl_ms",
            f"{statistic}_itl_ms",
            f"{statistic} inter-token latency of the chosen configuration in milliseconds, 1 "
            f"place: only in an index selected on it (--itl-statistic {statistic}), where it "
            "decided the pick beside the median.",
            _POSITIVE,
            places=1,
            optional=True,
        )
        for statistic in ("p90", "p95", "p99")
    ),
    RowField(
        "avg_requests_in_flight",
        "avg_batch_size",
        "Average requests being served at once (upstream avg_batch_size), 1 place.",
        _POSITIVE,
        places=1,
    ),
    RowField(
        "gpu_power_watts_total",
        "avg_power_watts",
        "Average total GPU power of the configuration in watts, rounded to an integer.",
        _WATTS,
        places=0,
    ),
    RowField(
        "avg_output_tokens",
        "avg_output_len",
        "Average output length per request in tokens, rounded to an integer.",
        _WATTS,
        places=0,
    ),
    RowField(
        "avg_running_batch",
        "avg_batch_size",
        "Average running batch size (upstream avg_batch_size), 1 place.",
        _POSITIVE,
        places=1,
        mirrors="avg_requests_in_flight",
    ),
    RowField(
        "max_num_seqs",
        "max_num_seqs",
        "The server's maximum batch size (vLLM max_num_seqs) in the chosen configuration.",
        _COUNT,
    ),
    RowField(
        "row_id",
        "nickname",
        "The row's name: slug/gpu/num_gpus/max_num_seqs.",
        {
            "type": "string",
            "pattern": "^[a-z0-9]+(-[a-z0-9]+)*/[A-Za-z0-9]+/[1-9][0-9]*/[1-9][0-9]*$",
        },
        computed="`slug`/`gpu`/`num_gpus`/`max_num_seqs`",
    ),
)
ROW: Mapping[str, RowField] = {f.name: f for f in ROW_FIELDS}
ROW_NAMES = tuple(f.name for f in ROW_FIELDS if not f.optional)  # every row has these
# The fields a row has only when the index selects on their statistic.
OPTIONAL_NAMES = tuple(f.name for f in ROW_FIELDS if f.optional)
# What index_row reads of a configuration: only these are turned into Python values (row_id
# also reads the configuration's key). An optional field's column is read when it is asked for.
ROW_COLUMNS = tuple(
    dict.fromkeys(
        [
            *(f.source for f in ROW_FIELDS if not f.optional),
            *("nickname", "gpu_model", "num_gpus", "max_num_seqs"),
        ]
    )
)


def row_schema() -> dict[str, Any]:
    """The row part of schemas/index.schema.json (``$defs/rowFields``)."""
    return {
        "description": "The fields of an index row (no other key is allowed where a row is used: "
        "see row).",
        "type": "object",
        "required": list(ROW_NAMES),
        "properties": {f.name: {"description": f.description, **f.schema} for f in ROW_FIELDS},
    }


def _how(f: RowField) -> str:
    if f.mirrors:
        return f"the same value as `{f.mirrors}`"
    if f.computed:
        return f.computed
    if f.places is None:
        return f.conversion or "as is"
    rounding = "integer" if f.places == 0 else f"{f.places} place" + "s" * (f.places > 1)
    how = f"{f.conversion}, {rounding}" if f.conversion else rounding
    return f"{how}; only when selected on it" if f.optional else how


def field_table() -> str:
    """The row's fields as the Markdown table of docs/design.md."""
    lines = ["| field | upstream column | published as | meaning |", "|---|---|---|---|"]
    for f in ROW_FIELDS:
        meaning = f.description.replace("|", "\\|")
        lines.append(f"| `{f.name}` | `{f.source}` | {_how(f)} | {meaning} |")
    return "\n".join(lines)
