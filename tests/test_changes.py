"""What a change touches (docs/design.md, *What a change touches*): a new extra or a new impacts
factor reaches every place from its one declaration, or fails here naming each place it must
still reach. An extra is declared in model.EXTRAS, a factor in documents/factors.json."""

from __future__ import annotations

import copy
import inspect
import re

import pytest

from energy_index import api
from energy_index.documents.factors import impact_factors
from energy_index.documents.outputs import RECOGNISERS, Ends
from energy_index.documents.schemas import KIND_SCHEMAS, SCHEMAS
from energy_index.documents.tables import DIFFUSION_TABLES, TABLES
from energy_index.flows.diffusion_extras import DIFFUSION_PRODUCERS
from energy_index.flows.extras import PRODUCERS
from energy_index.model import EXTRAS
from energy_index.steps.impacts import HOST_FORMS, energy_bounds
from energy_index.steps.plan import _estimated
from tests.conftest import REPO

PACKAGE = REPO / "pipeline" / "energy_index"
# A pick as the impacts and the planner see it: J per output token, GPU W, GPUs.
ROW = {"joules_per_output_token": 0.5, "gpu_power_watts_total": 1000.0, "num_gpus": 2}


@pytest.mark.parametrize("keyword", EXTRAS)
def test_each_extra_reaches_every_place_it_must(keyword: str):
    """The command line's option, the output path and the recogniser are made from the record;
    these are the places the record cannot make."""
    extra = EXTRAS[keyword]
    missing = []
    if keyword not in PRODUCERS:
        missing.append("its producer: PRODUCERS in flows/extras.py")
    if extra.columns and keyword not in TABLES:
        missing.append("its table's writer: TABLES in documents/tables.py")
    if extra.flag and keyword not in inspect.signature(api.build).parameters:
        missing.append("its keyword: build() in api.py (tests/test_public_api.py)")
    if not (REPO / "schemas" / extra.schema).is_file():
        missing.append(f"its schema: schemas/{extra.schema}")
    if extra.schema not in SCHEMAS:
        missing.append("the schemas validate and the site know: SCHEMAS in documents/schemas.py")
    if extra.kind and KIND_SCHEMAS.get(extra.kind) != extra.schema:
        missing.append("its kind's schema, for validate: KIND_SCHEMAS in documents/schemas.py")
    assert missing == [], f"the extra {keyword!r} (model.EXTRAS) lacks " + "; ".join(missing)


@pytest.mark.parametrize("keyword", [k for k, extra in EXTRAS.items() if extra.diffusion])
def test_each_extra_of_a_diffusion_index_reaches_every_place_it_must(keyword: str):
    """An extra written beside a diffusion index too (``Extra.diffusion``): its producer, table,
    schema and kind there, which its token form's do not give."""
    extra = EXTRAS[keyword].for_diffusion()
    assert extra is not None
    missing = []
    if keyword not in DIFFUSION_PRODUCERS:
        missing.append("its producer: DIFFUSION_PRODUCERS in flows/diffusion_extras.py")
    if extra.columns and keyword not in DIFFUSION_TABLES:
        missing.append("its table's writer: DIFFUSION_TABLES in documents/tables.py")
    if not (REPO / "schemas" / extra.schema).is_file():
        missing.append(f"its schema: schemas/{extra.schema}")
    if extra.schema not in SCHEMAS or KIND_SCHEMAS.get(extra.kind) != extra.schema:
        missing.append("its kind's schema: SCHEMAS and KIND_SCHEMAS in documents/schemas.py")
    opening = f'{{"version": "1", "kind": "{extra.kind}"'.encode()
    if not RECOGNISERS[extra.role](Ends(opening, opening)):
        missing.append("its recogniser: documents/outputs.py")
    assert missing == [], f"the extra {keyword!r} beside a diffusion index lacks " + "; ".join(
        missing
    )


def test_each_keyword_of_the_extras_places_is_an_extra():
    """A place keyed by an extra's keyword holds no keyword that model.EXTRAS does not declare."""
    assert set(PRODUCERS) <= set(EXTRAS), "flows/extras.py PRODUCERS"
    assert set(TABLES) <= {k for k, extra in EXTRAS.items() if extra.columns}, (
        "documents/tables.py TABLES"
    )
    diffusion = {k: form for k, extra in EXTRAS.items() if (form := extra.diffusion)}
    assert set(DIFFUSION_PRODUCERS) <= set(diffusion), "flows/diffusion_extras.py"
    assert set(DIFFUSION_TABLES) <= {k for k, form in diffusion.items() if form.columns}, (
        "documents/tables.py DIFFUSION_TABLES"
    )


def _raised(factors: dict, factor_id: str) -> dict:
    """``factors`` with ``factor_id`` at its high bound a thousand times higher."""
    changed = copy.deepcopy(factors)
    changed[factor_id]["high"]["value"] = changed[factor_id]["high"]["value"] * 1000 + 1
    return changed


@pytest.mark.parametrize("factor_id", impact_factors()["factors"])
def test_each_impacts_factor_reaches_every_place_it_must(factor_id: str):
    """Every factor of documents/factors.json moves the facility estimate and is listed with it,
    in the impacts (steps/impacts.py) and in the planner (steps/plan.py), and the report page's
    carbon by country (pages/assets/impacts.js) reads it. Its figures, citation and definition
    reach impacts.json, its tables and the page's factors table from the file itself."""
    factors = impact_factors()["factors"]
    changed = _raised(factors, factor_id)
    missing = []
    bounds = energy_bounds(ROW, factors)["high"]
    moved = energy_bounds(ROW, changed)["high"]
    listed = {name.split(".")[0] for name in bounds["factors"]["facility"]} | set(
        HOST_FORMS.values()
    )
    if moved["facility"] == bounds["facility"] or factor_id not in listed:
        missing.append("the estimate and the factors it lists: energy_bounds in steps/impacts.py")
    plan = _estimated(
        ROW,
        {"low": 1000.0, "high": 1000.0},
        {"low": 0.5, "high": 0.5},
        load=1.0,
        tokens=100.0,
        factors=factors,
        grid={},
    )
    named = {name.split(".")[0] for name in plan["factors"]["high"]} | set(HOST_FORMS.values())
    if factor_id not in named:
        missing.append("the planner's facility estimate: _estimated in steps/plan.py")
    script = (PACKAGE / "pages" / "assets" / "impacts.js").read_text("utf-8")
    if not re.search(rf"\bf\.{factor_id}\[", script):
        missing.append("the page's carbon by country: facilityJoules in pages/assets/impacts.js")
    assert missing == [], f"the factor {factor_id!r} (documents/factors.json) lacks " + "; ".join(
        missing
    )
