"""From measured GPU joules to estimated system energy and carbon, as ranges, per index row.

The measured figure (GPU energy per output token, the index's) is never changed; everything
built from it with the cited factors (energy_index/documents/factors.json) is a range
[low, high], in fields of its own marked ``status: estimated`` with the boundary it covers and
the factor bounds that gave each end:

    host (J/token)     time form:  host W per GPU × GPUs ÷ throughput, where throughput =
                                   measured GPU power ÷ measured J/token (tokens/s)
                       ratio form: host-to-GPU ratio × measured J/token
                       low = the smaller of the two forms at their low bounds, high = the
                       larger at their high bounds; the form that gave each is named
    server             (GPU + host) × idle-capacity multiplier
    facility           server × PUE
    carbon (gCO2e)     facility Wh ÷ 1000 × the country's grid intensity (gCO2e/kWh), from
                       the unrounded facility bounds (``carbon_in``); not listed per country
                       in a row, which would grow with rows × countries: the page applies each
                       country's intensity in the browser (``assets/impacts.js``, same steps)

Per response means per response of the measured mean output length (``avg_output_tokens``).
Where the pick's output-length distribution is known (``steps.responses``: responses.json),
the measured block also carries its Wh per response quantiles, as measured, and the estimated
blocks the same quantiles of output length at their bounds (``wh_per_response_quantiles``).
Every published number is rounded to four significant digits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from energy_index.errors import DerivationError, shown
from energy_index.model import json_number

SIGNIFICANT_DIGITS = 4
_SIGNIFICANT = f".{SIGNIFICANT_DIGITS}g"  # the format, made once: a nested spec cost a third more
JOULES_PER_WH = 3600.0
HOST_FORMS = {"time": "host_power_per_gpu", "ratio": "host_ratio_to_gpu"}


def significant(value: float) -> float:
    """``value`` to four significant digits: how every estimate is published."""
    return float(format(value, _SIGNIFICANT))


def host_joules(
    row: Mapping[str, Any], factors: Mapping[str, Any], *, form: str, bound: str
) -> float:
    """Host energy per output token (J) of one index row, by one form at one bound."""
    joules = float(row["joules_per_output_token"])
    value = float(factors[HOST_FORMS[form]][bound]["value"])
    if form == "time":  # W × GPUs ÷ (tokens/s), throughput = GPU W ÷ J/token
        watts = float(row["gpu_power_watts_total"])
        if not watts > 0:  # the index's whole watts: a pick measured under 0.5 W is 0 there
            name = shown(row.get("row_id", "the plan"))
            raise DerivationError(
                f"{name}: gpu_power_watts_total {json_number(watts)} W gives no throughput, and "
                "the host's time form divides by it: no impacts"
            )
        return value * float(row["num_gpus"]) * joules / watts
    return value * joules


def energy_bounds(row: Mapping[str, Any], factors: Mapping[str, Any]) -> dict[str, Any]:
    """Per bound: which host form gave it, host J/token, server and facility J/token (unrounded),
    and the factor bounds each boundary's figure is made with (every factor of factors.json:
    tests/test_changes.py)."""
    joules = float(row["joules_per_output_token"])
    bounds: dict[str, Any] = {}
    for bound, pick in (("low", min), ("high", max)):
        by_form = {form: host_joules(row, factors, form=form, bound=bound) for form in HOST_FORMS}
        form = pick(sorted(by_form), key=lambda name: by_form[name])
        server = (joules + by_form[form]) * float(factors["idle_capacity"][bound]["value"])
        server_factors = [f"{HOST_FORMS[form]}.{bound}", f"idle_capacity.{bound}"]
        bounds[bound] = {
            "form": form,
            "by_form": by_form,
            "host": by_form[form],
            "server": server,
            "facility": server * float(factors["pue"][bound]["value"]),
            "factors": {"server": server_factors, "facility": [*server_factors, f"pue.{bound}"]},
        }
    return bounds


def _range(low: float, high: float) -> dict[str, float]:
    return {"low": significant(low), "high": significant(high)}


def _per_mtok(joules: float) -> float:
    return joules * 1e6 / JOULES_PER_WH


def pick_of(row: Mapping[str, Any], *, with_model_id: bool = False) -> dict[str, Any]:
    """Which pick a row of impacts or of the calibration table is about."""
    keys = ("row_id", "model", "model_id", "gpu", "num_gpus")
    return {key: row[key] for key in keys if with_model_id or key != "model_id"}


def measured_joules(row: Mapping[str, Any]) -> dict[str, Any]:
    """The index's measured GPU energy per output token, with its status and boundary."""
    return {
        "status": "measured",
        "boundary": "gpu",
        "joules_per_output_token": row["joules_per_output_token"],
    }


def impact_row(
    row: Mapping[str, Any],
    factors: Mapping[str, Any],
    response: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The impacts of one index row: its measured block, and the estimated blocks beside it.
    ``response`` is the pick's energy per response (``steps.responses``), when known."""
    bounds = energy_bounds(row, factors)
    low, high = bounds["low"], bounds["high"]
    tokens = float(row["avg_output_tokens"])
    lengths = response["output_tokens"] if response else None

    def block(boundary: str) -> dict[str, Any]:
        return {
            "status": "estimated",
            "boundary": boundary,
            "wh_per_million_output_tokens": _range(
                _per_mtok(low[boundary]), _per_mtok(high[boundary])
            ),
            "wh_per_response": _range(
                low[boundary] * tokens / JOULES_PER_WH, high[boundary] * tokens / JOULES_PER_WH
            ),
            "factors": {"low": low["factors"][boundary], "high": high["factors"][boundary]},
            **(
                {
                    "wh_per_response_quantiles": {
                        name: _range(
                            low[boundary] * length / JOULES_PER_WH,
                            high[boundary] * length / JOULES_PER_WH,
                        )
                        for name, length in lengths.items()
                    }
                }
                if lengths
                else {}
            ),
        }

    server = block("server")
    server["host_joules_per_output_token"] = {
        "low": significant(low["host"]),
        "high": significant(high["host"]),
        "low_form": low["form"],
        "high_form": high["form"],
        "time_form": _range(low["by_form"]["time"], high["by_form"]["time"]),
        "ratio_form": _range(low["by_form"]["ratio"], high["by_form"]["ratio"]),
    }
    facility = block("facility")
    return {
        **pick_of(row, with_model_id=True),
        "measured": {
            **measured_joules(row),
            "wh_per_million_output_tokens": row["wh_per_million_output_tokens"],
            "gpu_power_watts_total": row["gpu_power_watts_total"],
            "avg_output_tokens": row["avg_output_tokens"],
            **({"wh_per_response": response["wh_per_response"]} if response else {}),
        },
        "estimated": {
            "server": server,
            "facility": facility,
            # The facility's energy × each country's intensity: its factor bounds are the
            # facility's, named there (impacts format 3; repeated, 1.4 MB at 10⁵).
            "carbon": {"status": "estimated", "boundary": "facility"},
        },
    }


def carbon_in(
    row: Mapping[str, Any], factors: Mapping[str, Any], g_per_kwh: float
) -> dict[str, dict[str, float]]:
    """The estimated facility carbon of one index row in a country of grid intensity
    ``g_per_kwh`` (gCO2e/kWh), as ranges: per million output tokens and per response of the
    measured mean output length.

    Example: ``carbon_in(index["rows"][0], impact_factors()["factors"], 56.04)``.
    """
    bounds = energy_bounds(row, factors)
    low, high = bounds["low"]["facility"], bounds["high"]["facility"]
    tokens = float(row["avg_output_tokens"])
    return {
        "g_per_million_output_tokens": _range(
            _per_mtok(low) / 1000 * g_per_kwh, _per_mtok(high) / 1000 * g_per_kwh
        ),
        "g_per_response": _range(
            low * tokens / JOULES_PER_WH / 1000 * g_per_kwh,
            high * tokens / JOULES_PER_WH / 1000 * g_per_kwh,
        ),
    }


def impact_rows(
    rows: Iterable[Mapping[str, Any]],
    factors: Mapping[str, Any],
    responses: Iterable[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The impacts of every index row, in the index's order; ``responses`` (by row_id) give
    the picks' energy per response where known.

    Example: ``impact_rows(index["rows"], impact_factors()["factors"])[0]["measured"]``.
    """
    by_row = {r["row_id"]: r for r in responses if "wh_per_response" in r}
    return [impact_row(row, factors, by_row.get(row["row_id"])) for row in rows]
