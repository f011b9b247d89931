"""Names anyone can find (issue 34 item 4): a model by its nickname, model id or slug, a GPU type
by its name or slug, any case; a wrong name gets the closest ones and the listing's pointer, the
listing (``energy-index names``, ``energy_index.names()``) every name of every task."""

from __future__ import annotations

import json
from typing import Any

import pytest

import energy_index
from energy_index.errors import UsageError
from energy_index.steps.names import (
    CLOSENESS,
    CLOSEST,
    GPU_FIELDS,
    MODEL_FIELDS,
    chosen,
    closest,
    named,
    names_of,
)
from tests.conftest import GOLDEN, invoke


def curve(model: str, model_id: str, gpu: str = "H100") -> dict[str, Any]:
    return {"model": model, "model_id": model_id, "gpu": gpu}


LLAMA = curve("Llama 3.1 70B Instruct", "meta-llama/Llama-3.1-70B-Instruct")
CURVES = [
    LLAMA,
    curve("Llama 3.1 70B Instruct", "meta-llama/Llama-3.1-70B-Instruct", "B200"),
    curve("Llama 3.3 70B Instruct", "meta-llama/Llama-3.3-70B-Instruct"),
    curve("Llama 3.1 8B Instruct", "meta-llama/Llama-3.1-8B-Instruct"),
    curve("Qwen 3 8B", "Qwen/Qwen3-8B", "B200"),
]


@pytest.mark.parametrize(
    "name",
    ["Llama 3.1 70B Instruct", "llama 3.1 70b INSTRUCT", "meta-llama/Llama-3.1-70B-Instruct",
     "META-LLAMA/LLAMA-3.1-70B-INSTRUCT", "llama-3-1-70b-instruct", "LLAMA-3-1-70B-Instruct"],
)  # fmt: skip
def test_a_model_is_found_by_nickname_model_id_or_slug_in_any_case(name: str):
    found = named(CURVES, name, field_names=MODEL_FIELDS, parameter="model")
    assert [(c["model"], c["gpu"]) for c in found] == [
        ("Llama 3.1 70B Instruct", "H100"), ("Llama 3.1 70B Instruct", "B200")
    ]  # fmt: skip


def test_a_gpu_is_found_by_name_or_slug_and_none_keeps_every_curve():
    assert [c["model"] for c in named(CURVES, "b200", field_names=GPU_FIELDS, parameter="gpu")] == [
        "Llama 3.1 70B Instruct", "Qwen 3 8B"
    ]  # fmt: skip
    assert named(CURVES, None, field_names=GPU_FIELDS, parameter="gpu") == CURVES


def test_the_slug_of_a_model_id_is_not_a_name_of_it():
    """Only the nickname's slug is printed (row_id, the site's paths): the model id's is not."""
    with pytest.raises(UsageError):
        named(CURVES, "meta-llama-llama-3-1-70b-instruct", field_names=MODEL_FIELDS,
              parameter="model")  # fmt: skip


def test_a_misspelt_model_gets_the_closest_names_and_the_full_count():
    with pytest.raises(UsageError) as raised:
        named(CURVES, "Lama 3.1 70B", field_names=MODEL_FIELDS, parameter="model")
    assert raised.value.parameter == "model"
    assert str(raised.value) == (
        "Lama 3.1 70B is not a model of these curves; closest: Llama 3.1 70B Instruct, "
        "Llama 3.3 70B Instruct, Llama 3.1 8B Instruct (energy-index names lists all 4 models, "
        "with every name each answers to)"
    )


def test_a_misspelt_gpu_says_gpu_types():
    with pytest.raises(UsageError, match=r"^H10 is not a GPU type of these curves; closest: H100 "
                       r"\(energy-index names lists all 2 GPU types,"):  # fmt: skip
        named(CURVES, "H10", field_names=GPU_FIELDS, parameter="gpu")


def test_a_gpu_the_task_holds_but_the_model_was_not_measured_on_is_said_to_be_that():
    """Not "not a GPU type of these curves": the task has H100, Qwen 3 8B was measured on B200."""
    with pytest.raises(UsageError) as raised:
        chosen(CURVES, "qwen-3-8b", "h100")
    assert raised.value.parameter == "gpu"
    assert str(raised.value) == (
        "h100 is a GPU type of these curves, but Qwen 3 8B was measured on B200 only"
    )
    two_gpus = [*CURVES, curve("Qwen 3 8B", "Qwen/Qwen3-8B", "A100")]
    with pytest.raises(UsageError, match=r"but Qwen 3 8B was measured on A100, B200 only$"):
        chosen(two_gpus, "Qwen 3 8B", "H100")


def test_chosen_narrows_by_model_and_gpu_and_refuses_an_unknown_one_among_every_curve():
    assert chosen(CURVES, "Llama 3.1 70B Instruct", "B200") == [CURVES[1]]
    assert chosen(CURVES, None, "b200") == [CURVES[1], CURVES[4]]
    assert chosen(CURVES, "Qwen 3 8B", None) == [CURVES[4]]
    assert chosen(CURVES, None, None) == CURVES
    with pytest.raises(UsageError, match=r"^H10 is not a GPU type of these curves; closest: H100"):
        chosen(CURVES, "Qwen 3 8B", "H10")
    with pytest.raises(UsageError, match=r"^GPT is not a model of these curves"):
        chosen(CURVES, "GPT", "H100")


def _ratio_curves(*names: str) -> list[dict[str, Any]]:
    # model id and slug both the nickname, so that its closeness is the nickname's alone
    return [curve(n, n) for n in names]


def test_closeness_is_inclusive_at_its_cut_off():
    """difflib's ratio 2·M/T: 'abc' in 'abcxxxx' is 6/10 = 0.6, in 'abcxxxxx' 6/11."""
    assert CLOSENESS == 0.6
    assert closest("abc", _ratio_curves("abcxxxx", "abcxxxxx"), MODEL_FIELDS) == ["abcxxxx"]


def test_at_most_closest_names_closest_first_then_by_name():
    assert CLOSEST == 3
    curves = _ratio_curves("abcz", "abcy", "abxx", "abcxxxx", "abcw")
    # abcw, abcy, abcz tie at 6/7; abxx (4/7) and abcxxxx (0.6) are left out: only 3
    assert closest("abc", curves, MODEL_FIELDS) == ["abcw", "abcy", "abcz"]
    assert closest("abc", _ratio_curves("abcxxxx", "abcd"), MODEL_FIELDS) == ["abcd", "abcxxxx"]


def test_closeness_counts_the_best_of_every_name_a_model_answers_to():
    """Typed close to a model id, the nickname is offered."""
    near = closest("qwen/qwen3-8", [curve("Qwen 3 8B", "Qwen/Qwen3-8B")], MODEL_FIELDS)
    assert near == ["Qwen 3 8B"]


def test_names_of_lists_each_model_once_with_its_gpus_sorted():
    assert names_of(CURVES) == {
        "models": [
            {"model": "Llama 3.1 70B Instruct", "model_id": "meta-llama/Llama-3.1-70B-Instruct",
             "slug": "llama-3-1-70b-instruct", "gpus": ["B200", "H100"]},
            {"model": "Llama 3.1 8B Instruct", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
             "slug": "llama-3-1-8b-instruct", "gpus": ["H100"]},
            {"model": "Llama 3.3 70B Instruct", "model_id": "meta-llama/Llama-3.3-70B-Instruct",
             "slug": "llama-3-3-70b-instruct", "gpus": ["H100"]},
            {"model": "Qwen 3 8B", "model_id": "Qwen/Qwen3-8B", "slug": "qwen-3-8b",
             "gpus": ["B200"]},
        ],
        "gpus": ["B200", "H100"],
    }  # fmt: skip


def test_the_planner_takes_the_slug_it_prints():
    """Done means: plan --model llama-3-1-70b-instruct works (issue 34 item 4)."""
    by_slug = energy_index.plan(source=GOLDEN, model="qwen-3-14b", tokens_per_second=2000)
    by_name = energy_index.plan(source=GOLDEN, model="Qwen 3 14B", tokens_per_second=2000)
    assert by_slug.best == by_name.best
    assert by_slug.best["configurations"][0]["row_id"].startswith("qwen-3-14b/")


def test_the_command_and_the_api_refuse_a_misspelt_model_in_the_same_words():
    result = invoke("plan", "--from", GOLDEN, "--tokens-per-second", "10", "--model", "Qwen 3 41B")
    assert result.exit_code == 2
    with pytest.raises(UsageError) as raised:
        energy_index.plan(source=GOLDEN, tokens_per_second=10, model="Qwen 3 41B")
    assert result.output == f"error: --model: {raised.value}\n"
    assert "closest: Qwen 3 14B" in str(raised.value)


def test_every_name_the_listing_gives_is_taken_by_the_planner():
    """The listing and the planner read the same curves: each model's nickname, model id and
    slug plans that model, and the refusal's count is the listing's."""
    listing = energy_index.names(source=GOLDEN, task="lm-arena-chat").as_json()
    (task,) = listing["tasks"]
    for model in task["models"][:3]:
        for name in (model["model"], model["model_id"], model["slug"]):
            plan = energy_index.plan(source=GOLDEN, model=name, tokens_per_second=100)
            assert plan.best["model_id"] == model["model_id"]
    with pytest.raises(UsageError, match=f"lists all {len(task['models'])} models"):
        energy_index.plan(source=GOLDEN, tokens_per_second=100, model="nothing of the kind")


def test_the_listing_names_every_task_the_snapshot_holds_and_the_command_prints_it():
    listing = energy_index.names(source=GOLDEN).as_json()
    assert listing["kind"] == "names"
    assert listing["source"]["location"] == str(GOLDEN)
    tasks = [t["task"] for t in listing["tasks"]]
    assert "lm-arena-chat" in tasks and tasks == list(dict.fromkeys(tasks))
    printed = invoke("names", "--from", GOLDEN, "--json")
    assert printed.exit_code == 0 and json.loads(printed.output) == listing
    table = invoke("names", "--from", GOLDEN, "--task", "lm-arena-chat")
    assert table.exit_code == 0
    chat = listing["tasks"][tasks.index("lm-arena-chat")]
    for model in chat["models"]:
        assert any(
            line.split() == [*model["model"].split(), model["model_id"], model["slug"],
                             *", ".join(model["gpus"]).split()]
            for line in table.output.splitlines()
        )  # fmt: skip


def test_the_listing_refuses_an_unknown_task_as_build_does():
    result = invoke("names", "--from", GOLDEN, "--task", "no-such-task")
    assert result.exit_code == 2 and "--task: 'no-such-task': unknown task" in result.output
