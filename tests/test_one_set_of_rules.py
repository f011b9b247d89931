"""One set of rules for every surface (issue 34 item 6): a number typed is read by one grammar
(model.NUMBER_TEXT) by the command line, the API's deadlines and the report page's planner (whose
browser test, tests/test_report_browser.py, compares its words with the command's); plan reads
only what build accepts; --json never holds NaN or Infinity."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import energy_index
from energy_index import api
from energy_index.errors import EnergyIndexError, UsageError
from energy_index.model import INTEGER_TEXT, NUMBER_TEXT, checked_deadline, typed_number
from energy_index.pages.planner import planner_data
from tests.conftest import GOLDEN, invoke, write_snapshot

# What a number's text is made of, and what looks like one: every way float() reads or refuses.
ALPHABET = "0123456789_.eE+-infatyINFATYx \t"


def _reads(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


@given(st.text(alphabet=ALPHABET, max_size=12))
def test_the_grammar_is_python_s_float_on_ascii_text(text: str):
    assert bool(re.fullmatch(NUMBER_TEXT, text)) == _reads(float, text)


@given(st.text(alphabet="0123456789_+- \tx.", max_size=10))
def test_an_integer_as_typed_is_python_s_int(text: str):
    assert bool(re.fullmatch(INTEGER_TEXT, text)) == _reads(int, text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("2_000", 2000), (" 7 ", 7), ("+7", 7), ("-0", 0), ("2000.0", 2000.0), (".5e4", 5000.0),
     ("1e3", 1000.0), ("-inf", -math.inf), ("Infinity", math.inf)],
)  # fmt: skip
def test_typed_numbers_keep_a_whole_number_typed_an_int(text: str, value: float):
    read = typed_number(text)
    assert read == value and type(read) is type(value)


@pytest.mark.parametrize("text", ["0x7D0", "\u0661\u0662", "1__0", "", "2000\u00a0", "1e", "0b1"])
def test_what_the_grammar_refuses_is_no_number(text: str):
    with pytest.raises(ValueError):
        typed_number(text)


@pytest.mark.parametrize(
    ("load", "words"),
    [
        ("0x7D0", "--tokens-per-second: '0x7D0' is not a number of output tokens per second"),
        ("\u0661\u0662", "--tokens-per-second: '\u0661\u0662' is not a number of output tokens"),
        ("0.0005", "--tokens-per-second: 0.0005 output tokens per second is below the 0.001"),
        ("5e-324", "--tokens-per-second: 5e-324 output tokens per second is below the 0.001"),
    ],
)
def test_the_command_refuses_a_load_typed_in_the_api_s_words(load: str, words: str):
    result = invoke("plan", "--from", GOLDEN, "--tokens-per-second", load)
    assert result.exit_code == 2 and result.output.startswith(f"error: {words}")
    api_value = load if not re.fullmatch(NUMBER_TEXT, load) else typed_number(load)
    with pytest.raises(UsageError) as raised:
        energy_index.plan(source=GOLDEN, tokens_per_second=api_value)
    assert result.output == f"error: --tokens-per-second: {raised.value}\n"


def test_the_command_reads_2_000_as_2000():
    grouped = invoke("plan", "--from", GOLDEN, "--tokens-per-second", "2_000", "--json")
    plain = invoke("plan", "--from", GOLDEN, "--tokens-per-second", "2000", "--json")
    assert grouped.exit_code == 0 and grouped.output == plain.output


@pytest.mark.parametrize("deadline", ["0x10", "\u0661\u0662", "1__0"])
def test_a_deadline_is_read_by_the_same_grammar(deadline: str):
    with pytest.raises(UsageError, match="is not a number of milliseconds"):
        checked_deadline(deadline)
    assert checked_deadline("1_00") == 100.0


def test_the_page_is_given_the_command_s_grammar_and_limits():
    from energy_index.errors import QUOTED_CHARACTERS
    from energy_index.settings import MAX_PLAN_TOKENS_PER_SECOND, MIN_PLAN_TOKENS_PER_SECOND

    none = SimpleNamespace(tails={}, rows=[], itl=[], groups=[])  # a page with no configuration
    data = planner_data([], none)  # type: ignore[arg-type]
    assert (data["number_text"], data["integer_text"]) == (NUMBER_TEXT, INTEGER_TEXT)
    assert (data["min_tokens_per_second"], data["max_tokens_per_second"]) == (
        MIN_PLAN_TOKENS_PER_SECOND, MAX_PLAN_TOKENS_PER_SECOND
    )  # fmt: skip
    assert data["min_tokens_per_second_text"] == "0.001"
    assert data["quoted_characters"] == QUOTED_CHARACTERS


def _tiny_energy_snapshot(directory: Path) -> Path:
    """The golden chat task with its first configuration's energy per token 5e-324 J: valid
    upstream data (positive, finite) whose index row rounds to 0 J, which build refuses."""
    task = json.loads((GOLDEN / "public/data/tasks/lm-arena-chat.json").read_bytes())
    first = task["configurations"][0]
    first["energy_per_token_joules"] = 5e-324
    first["energy_per_request_joules"] = 5e-324 * first["avg_output_len"]
    return write_snapshot(directory, json.dumps(task).encode())


def test_plan_refuses_what_build_refuses_in_its_words(tmp_path: Path):
    snapshot = _tiny_energy_snapshot(tmp_path / "snapshot")
    build = invoke("build", "--from", snapshot, "--out", tmp_path / "out" / "index.json")
    plan = invoke("plan", "--from", snapshot, "--tokens-per-second", "1000", "--json")
    assert build.exit_code == plan.exit_code == 1
    assert "joules_per_output_token: 0.0 is less than or equal to the minimum" in build.output
    assert plan.output == build.output  # the same refusal, and no JSON (no Infinity) printed
    with pytest.raises(EnergyIndexError) as raised:
        energy_index.plan(source=snapshot, tokens_per_second=1000)
    assert str(raised.value) in build.output


def _slow_and_tiny_snapshot(directory: Path, task: str) -> Path:
    """The golden task with one configuration at 5e-324 J, too slow for the default deadline
    and fast enough for a longer one: build accepts it at the default and refuses it at the
    longer deadline."""
    tasks = json.loads((GOLDEN / f"public/data/tasks/{task}.json").read_bytes())
    configurations = tasks["configurations"]
    if task == "text-to-image":  # default 30 s
        first = configurations[0]
        first["energy_per_image_joules"], first["batch_latency_s"] = 5e-324, 40
    else:  # default median ITL 500 ms
        (first,) = (
            c for c in configurations
            if (c["model_id"], c["gpu_model"], c["max_num_seqs"]) == ("Qwen/Qwen3-14B", "B200", 8)
        )  # fmt: skip
        first["energy_per_token_joules"] = 5e-324
        first["energy_per_request_joules"] = 5e-324 * first["avg_output_len"]
        for statistic, ms in zip(
            ("median", "p90", "p95", "p99"), (600, 700, 710, 720), strict=True
        ):
            first[f"{statistic}_itl_ms"] = ms
    return write_snapshot(directory, json.dumps(tasks).encode(), task=task)


@pytest.mark.parametrize(
    ("task", "longer", "load"),
    [
        ("lm-arena-chat", ("--itl-deadline-ms", "1000"), ("--tokens-per-second", "100000")),
        ("lm-arena-chat", ("--itl-statistic", "p90", "--itl-deadline-ms", "1000"),
         ("--tokens-per-second", "100000")),
        ("text-to-image", ("--deadline-s", "60"), ("--images-per-second", "0.01")),
    ],
)  # fmt: skip
def test_plan_refuses_what_build_refuses_at_the_plans_own_target(
    tmp_path: Path, task: str, longer: tuple[str, ...], load: tuple[str, ...]
):
    """Trial finding: plan checked the snapshot at the default target, then planned "inf
    tokens/s, 0 J per output token" at a target where build refuses it."""
    snapshot = _slow_and_tiny_snapshot(tmp_path / "snapshot", task)
    task_options = ("--task", task, "--from", snapshot)
    assert (
        invoke("build", *task_options, "--out", tmp_path / "default" / "index.json").exit_code == 0
    )
    assert invoke("plan", *task_options, *load).exit_code == 0
    build = invoke("build", *task_options, *longer, "--out", tmp_path / "longer" / "index.json")
    plan = invoke("plan", *task_options, *longer, *load, "--json")
    assert build.exit_code == plan.exit_code == 1
    assert "0.0 is less than or equal to the minimum of 0" in build.output
    assert plan.output == build.output  # build's words, and no plan printed


def test_json_never_holds_nan_or_infinity(monkeypatch):
    """A document holding a number JSON has not is refused, not printed as 'Infinity'."""
    document = {"kind": "plan", "plan": {"power_watts": {"high": math.inf}}}
    monkeypatch.setattr(api, "plan", lambda **options: api.Plan(document=document))
    result = invoke("plan", "--tokens-per-second", "10", "--json")
    assert result.exit_code == 1
    # one line, no JSON with 'Infinity' in it (json's words vary with Python's version)
    assert re.fullmatch(
        r"error: nothing printed: Out of range float values are not JSON compliant[^\n]*"
        r" \(NaN or Infinity: not JSON\)\n",
        result.output,
    )
