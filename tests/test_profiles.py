"""Latency profiles (profiles.json) and the index under another ITL statistic (--itl-statistic).

Every figure of the chat task's profiles is recomputed here by a small reference implementation
that shares no code with the pipeline: plain Python over the task file's JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from energy_index.cli import main
from energy_index.documents.editorial import editorial_text
from energy_index.documents.fields import records_of, series
from energy_index.documents.index import stated_itl_statistic
from energy_index.documents.schemas import PROFILES_SCHEMA, schema_problems
from energy_index.errors import UpstreamFormatError
from energy_index.flows.build import BuildSettings, build, run
from energy_index.flows.extras import profile_deadlines
from energy_index.flows.records import Extras
from energy_index.model import ITL_STATISTICS
from energy_index.settings import PROFILE_DEADLINES_MS
from energy_index.steps.profiles import latency_profiles
from tests.conftest import GOLDEN, PUBLISHED_DATES, TASK_PATH, write_snapshot

DATES = dict(zip(("retrieved", "updated"), PUBLISHED_DATES, strict=True))


# -- the reference implementation ---------------------------------------------------------------
def _slug(nickname: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", nickname.lower()).strip("-")


def _stable(configurations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ML.ENERGY's stability rule on a file without steady-state durations: a batch at least
    85 % full and positive energy, cascading to every larger max_num_seqs of the same server."""
    assert not any("steady_state_duration_seconds" in c for c in configurations)

    def unstable(c: dict[str, Any]) -> bool:
        return c["energy_per_token_joules"] <= 0 or c["avg_batch_size"] / c["max_num_seqs"] < 0.85

    lowest_unstable: dict[tuple[str, str, int], int] = {}
    for c in configurations:
        if unstable(c):
            server = (c["model_id"], c["gpu_model"], c["num_gpus"])
            lowest_unstable[server] = min(lowest_unstable.get(server, 10**9), c["max_num_seqs"])
    return [
        c
        for c in configurations
        if c["max_num_seqs"]
        < lowest_unstable.get((c["model_id"], c["gpu_model"], c["num_gpus"]), 10**9)
    ]


def _pick(candidates: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """Lowest energy; ties by median ITL, GPUs, max_num_seqs (none left beyond that here)."""
    ranked = sorted(
        candidates,
        key=lambda c: (
            c["energy_per_token_joules"],
            c["median_itl_ms"],
            c["num_gpus"],
            c["max_num_seqs"],
        ),
    )
    if len(ranked) > 1:
        first, second = ranked[0], ranked[1]
        assert (first["energy_per_token_joules"], first["median_itl_ms"]) != (
            second["energy_per_token_joules"],
            second["median_itl_ms"],
        ), "a tie the reference does not break"
    return ranked[0] if ranked else None


def reference_profiles(task_file: Path, deadlines: list[float]) -> dict[str, Any]:
    stable = _stable(json.loads(task_file.read_bytes())["configurations"])
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in stable:
        groups.setdefault((c["model_id"], c["gpu_model"]), []).append(c)
    picks: list[dict[str, Any]] = []
    chosen: dict[tuple[str, float, str, str], dict[str, Any]] = {}
    for statistic, column in ITL_STATISTICS.items():
        for deadline in deadlines:
            for group in sorted(groups):
                members = groups[group]
                free = _pick(members)
                assert free is not None
                pick = _pick(c for c in members if c[column] <= deadline)
                record: dict[str, Any] = {
                    "model": members[0]["nickname"],
                    "model_id": group[0],
                    "gpu": group[1],
                    "itl_statistic": statistic,
                    "itl_deadline_ms": deadline,
                    "infeasible": pick is None,
                    "binding": pick is not free,
                    "energy_penalty": None,
                    "row_id": None,
                    "num_gpus": None,
                    "max_num_seqs": None,
                    "wh_per_million_output_tokens": None,
                    "joules_per_output_token": None,
                    "itl_ms": None,
                }
                if pick is not None:
                    chosen[(statistic, deadline, *group)] = pick
                    joules = pick["energy_per_token_joules"]
                    record |= {
                        "energy_penalty": round(joules / free["energy_per_token_joules"] - 1, 4),
                        "row_id": f"{_slug(pick['nickname'])}/{group[1]}/{pick['num_gpus']}/"
                        f"{pick['max_num_seqs']}",
                        "num_gpus": pick["num_gpus"],
                        "max_num_seqs": pick["max_num_seqs"],
                        "wh_per_million_output_tokens": round(joules / 3600 * 1e6, 2),
                        "joules_per_output_token": round(joules, 7),
                        "itl_ms": round(pick[column], 1),
                    }
                picks.append(record)
    ratios = {
        (statistic, deadline, model): round(
            chosen[(statistic, deadline, model, "B200")]["energy_per_token_joules"]
            / chosen[(statistic, deadline, model, "H100")]["energy_per_token_joules"],
            4,
        )
        for (statistic, deadline, model, gpu) in chosen
        if gpu == "B200" and (statistic, deadline, model, "H100") in chosen
    }
    return {"picks": picks, "ratios": ratios}


# -- the profiles, built by the pipeline --------------------------------------------------------
PICK_KEYS = ("model", "model_id", "gpu", "itl_statistic")
RATIO_KEYS = ("model", "model_id", "itl_statistic", "numerator_gpu", "denominator_gpu")


def _records(written: dict[str, Any], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """An object written by field as one record per position of its lists, here and not with
    the package's reader, so that a reader and writer wrong alike cannot agree."""
    lists = {key: value for key, value in written.items() if key not in keys}
    (length,) = {len(value) for value in lists.values()}
    return [
        {**{key: written[key] for key in keys}, **{key: lists[key][n] for key in lists}}
        for n in range(length)
    ]


@pytest.fixture(scope="module")
def chat_document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """profiles.json as build --profiles writes it, and the folder it is in (``_folder``)."""
    out = tmp_path_factory.mktemp("profiles") / "index.json"
    extras = Extras(flags=frozenset({"profiles"}), formats=("csv", "parquet"))
    run(GOLDEN, out=out, settings=BuildSettings(**DATES), extras=extras)
    document: dict[str, Any] = json.loads(out.with_name("profiles.json").read_bytes())
    return {**document, "_folder": out.parent}


@pytest.fixture(scope="module")
def chat_profiles(chat_document: dict[str, Any]) -> dict[str, Any]:
    """The document with a record per pick, by statistic, deadline and (model, GPU) (the
    reference's order and the table's), and a record per GPU ratio."""
    deadlines = chat_document["deadlines_ms"]  # each picks object's lists are over them
    picks = [
        _records(
            {**{k: group[k] for k in PICK_KEYS}, "itl_deadline_ms": deadlines, **group}, PICK_KEYS
        )
        for group in chat_document["picks"]
    ]
    by_deadline = [
        group[n]
        for statistic in chat_document["itl_statistics"]
        for n in range(len(chat_document["deadlines_ms"]))
        for group in picks
        if group[n]["itl_statistic"] == statistic
    ]
    ratios = [r for group in chat_document["gpu_ratios"] for r in _records(group, RATIO_KEYS)]
    return {**chat_document, "picks": by_deadline, "gpu_ratios": ratios}


def _at(document: dict[str, Any], statistic: str, deadline: float) -> list[dict[str, Any]]:
    return [
        p
        for p in document["picks"]
        if p["itl_statistic"] == statistic and p["itl_deadline_ms"] == deadline
    ]


def test_the_chat_profiles_match_the_reference_implementation_figure_for_figure(chat_profiles):
    reference = reference_profiles(GOLDEN / TASK_PATH, list(PROFILE_DEADLINES_MS))
    assert len(chat_profiles["picks"]) == len(reference["picks"]) == 4 * 7 * 32
    for mine, theirs in zip(chat_profiles["picks"], reference["picks"], strict=True):
        assert mine == theirs
    ratios = {
        (r["itl_statistic"], r["itl_deadline_ms"], r["model_id"]): r["energy_ratio"]
        for r in chat_profiles["gpu_ratios"]
    }
    assert ratios == reference["ratios"]
    assert len(ratios) > 100


def test_p99_at_500_ms_binds_8_of_32_picks_and_costs_up_to_110_percent(chat_profiles):
    picks = _at(chat_profiles, "p99", 500)
    assert len(picks) == 32
    assert sum(p["binding"] for p in picks) == 8
    assert not any(p["infeasible"] for p in picks)
    assert max(p["energy_penalty"] for p in picks) == pytest.approx(1.0991)
    tight = _at(chat_profiles, "median", 50)
    assert sum(p["binding"] for p in tight) == 19
    assert max(p["energy_penalty"] for p in tight) == pytest.approx(2.9115)


def test_the_median_column_at_500_ms_is_the_index(chat_profiles):
    index = json.loads(chat_profiles["_folder"].joinpath("index.json").read_bytes())
    picks = _at(chat_profiles, "median", 500)
    assert sorted(
        (p["row_id"], p["wh_per_million_output_tokens"], p["joules_per_output_token"])
        for p in picks
    ) == sorted(
        (r["row_id"], r["wh_per_million_output_tokens"], r["joules_per_output_token"])
        for r in index["rows"]
    )
    # On this data the median deadline never binds at 500 ms (the starting point).
    assert not any(p["binding"] for p in picks)


def test_the_unconstrained_picks_have_no_penalty_where_they_meet_the_deadline(chat_profiles):
    free = {(u["model_id"], u["gpu"]): u for u in chat_profiles["unconstrained"]}
    assert len(free) == 32
    for pick in chat_profiles["picks"]:
        if not pick["binding"]:
            assert pick["energy_penalty"] == 0
            assert pick["row_id"] == free[(pick["model_id"], pick["gpu"])]["row_id"]
        elif not pick["infeasible"]:
            assert pick["energy_penalty"] >= 0


def test_the_profiles_document_matches_its_schema_and_the_tables_hold_its_picks(
    chat_document, chat_profiles
):
    document = {k: v for k, v in chat_document.items() if k != "_folder"}
    assert schema_problems(document, schema=PROFILES_SCHEMA) == []
    group = document["picks"][0]
    broken = {**document, "picks": [{**group, "binding": ["yes", *group["binding"][1:]]}]}
    assert schema_problems(broken, schema=PROFILES_SCHEMA) != []
    records = chat_profiles["picks"]
    folder = chat_document["_folder"]
    csv = pl.read_csv(folder / "profiles.csv")
    parquet = pl.read_parquet(folder / "profiles.parquet")
    assert csv.height == len(records) and csv.columns == list(records[0])
    assert csv.get_column("binding").sum() == sum(p["binding"] for p in records)
    # Row for row, in the order the picks were tabled before they were written by field.
    assert parquet.to_dicts() == records
    path = folder / "profiles.json"
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.output == (
        f"{path}: valid against schemas/profiles.schema.json and the latency profiles' rules\n"
    )


def test_profiles_json_writes_each_model_and_gpu_s_picks_at_a_statistic_by_field(chat_document):
    """Issue 36: one object per (model, GPU) and statistic, a list per figure over deadlines_ms
    (format 2; 497 KB for the chat task's record per pick, 241 KB so)."""
    deadlines = chat_document["deadlines_ms"]
    picks, ratios = chat_document["picks"], chat_document["gpu_ratios"]
    assert chat_document["version"] == "3"
    assert len(picks) == 4 * 32
    assert [(p["itl_statistic"], p["model_id"], p["gpu"]) for p in picks] == [
        (statistic, model_id, gpu)
        for statistic in ITL_STATISTICS
        for model_id, gpu in sorted({(p["model_id"], p["gpu"]) for p in picks})
    ]
    for group in picks:  # over the document's deadlines_ms, not repeated (format 3)
        assert "itl_deadline_ms" not in group
        assert all(len(group[key]) == len(deadlines) for key in group if key not in PICK_KEYS)
    assert [(r["itl_statistic"], r["model_id"]) for r in ratios] == sorted(
        {(r["itl_statistic"], r["model_id"]) for r in ratios},
        key=lambda key: (list(ITL_STATISTICS).index(key[0]), key[1]),
    )
    assert any(len(r["itl_deadline_ms"]) < len(deadlines) for r in ratios)  # both GPUs must pick
    for group in ratios:
        assert group["itl_deadline_ms"] == [d for d in deadlines if d in group["itl_deadline_ms"]]
        assert len(group["energy_ratio"]) == len(group["itl_deadline_ms"])


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d["picks"][3]["row_id"].pop(), "$.picks[3].row_id (Qwen/Qwen3-235B-A22B-"
         "Instruct-2507 on H100 at median): 6 values where deadlines_ms has 7"),
        (lambda d: d["gpu_ratios"][0]["itl_deadline_ms"].pop(), "$.gpu_ratios[0].energy_ratio "
         "(Qwen/Qwen3-14B at median): 5 values where its itl_deadline_ms has 4"),
        (lambda d: [d["gpu_ratios"][0][k].pop(1) for k in ("itl_deadline_ms", "energy_ratio")],
         "'[20, 100, 200, 500]' is not the deadlines at which both B200 and H100 pick "
         "('[20, 50, 100, 200, 500]')"),
        (lambda d: d["gpu_ratios"].pop(0), "$.gpu_ratios: none for '[\"Qwen/Qwen3-14B\"]' at "
         "median (1 of the models picking on both B200 and H100 missing)"),
        (lambda d: d["picks"].append(d["picks"][5]), "$.picks[128]: a second object for "),
        (lambda d: d["picks"].pop(40), "$.picks: none for "),
        (lambda d: d["itl_statistics"].pop(), "$.picks[96].itl_statistic: 'p99' is not in "
         "itl_statistics"),
        (lambda d: d["gpu_ratios"].append(d["gpu_ratios"][0]), "a second object for "),
        (lambda d: d["picks"][7].update(gpu="A100"), '"A100"]\' is not one of unconstrained\'s '
         "(model_id, gpu) at median"),
        (lambda d: d["gpu_ratios"][1]["energy_ratio"].append(1.0), "$.gpu_ratios[1]."
         "energy_ratio (Qwen/Qwen3-235B-A22B-Instruct-2507 at median): 5 values where its "
         "itl_deadline_ms has 4"),
        (lambda d: d["gpu_ratios"][2]["itl_deadline_ms"].reverse(), "'[500, 200, 100, 50]' is "
         "not the deadlines at which both B200 and H100 pick ('[50, 100, 200, 500]')"),
    ],
)  # fmt: skip
def test_validate_refuses_lists_of_profiles_json_that_do_not_line_up(
    chat_document, tmp_path, change, said
):
    """A schema holds each list's values, not its length against another's: a list a value
    short would shift every pick after it to the wrong deadline and still pass it."""
    document = json.loads(json.dumps({k: v for k, v in chat_document.items() if k != "_folder"}))
    change(document)
    assert schema_problems(document, schema=PROFILES_SCHEMA) == []
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code != 0
    assert said in result.output, result.output


def test_a_picks_object_a_value_short_is_one_problem_not_its_ratio_s_too(chat_document, tmp_path):
    document = json.loads(json.dumps({k: v for k, v in chat_document.items() if k != "_folder"}))
    document["picks"][0]["row_id"].pop()  # Qwen 3 14B on B200, whose ratio reads its picks
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["validate", str(path)])
    lines = result.output.splitlines()
    assert [line.split(": ", 1)[1] for line in lines[1:]] == [
        "$.picks[0].row_id (Qwen/Qwen3-14B on B200 at median): 6 values where deadlines_ms has 7"
    ]


@pytest.mark.parametrize(
    ("kind", "said"),
    [("latency profiles", "latency profiles format 1"), ("plan-grid", "plan.json format 1")],
)
def test_validate_says_a_file_of_a_format_1_written_by_field_since_is_no_longer_written(
    tmp_path, kind, said
):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"kind": kind, "version": "1", "picks": []}))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code != 0
    assert said in result.output
    assert "no longer written since format 2" in result.output
    assert result.output.count("$.") == 1, result.output  # one sentence, not a schema's list


@pytest.mark.parametrize(
    ("kind", "version", "said"),
    [
        (
            "latency profiles",
            "2",
            "latency profiles format 2, each picks object with its deadlines",
        ),
        ("plan-grid", "2", "plan.json format 2, each (model, GPU)'s plans by field with the grid"),
        ("impacts", "2", "impacts format 2, each row's carbon block with the facility's factor"),
        ("diffusion impacts", "1", "the diffusion impacts format 1, each row's carbon block"),
    ],
)
def test_validate_says_a_file_of_a_format_this_round_made_smaller_is_no_longer_written(
    tmp_path, kind, version, said
):
    """Issue 36: profiles.json, plan.json and the impacts say once what they repeated; a file
    of the earlier format gets one sentence naming what changed, not a schema's list."""
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"kind": kind, "version": version, "rows": []}))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code != 0
    assert said in result.output, result.output
    assert result.output.count("$.") == 1, result.output


def test_a_step_s_picks_at_other_deadlines_than_the_document_s_are_the_package_s_error():
    """Format 3 writes a pick's lists over the document's deadlines_ms alone: picks made at
    other deadlines would be read at the wrong ones. A DerivationError naming the group."""
    from energy_index.documents.index import _over_deadlines
    from energy_index.errors import DerivationError

    picks = [{"model_id": "o/m", "gpu": "H100", "itl_deadline_ms": [5, 10], "row_id": ["a", "b"]}]
    assert _over_deadlines(picks, [5.0, 10.0]) == [
        {"model_id": "o/m", "gpu": "H100", "row_id": ["a", "b"]}
    ]
    with pytest.raises(DerivationError, match=r"^the latency profiles of o/m on H100: "):
        _over_deadlines(picks, [5.0, 20.0])


def test_the_build_refuses_profiles_whose_lists_do_not_line_up_and_writes_nothing(
    tmp_path, monkeypatch
):
    """The build holds its own profiles.json to validate's rules before writing: a writer that
    lost a value would otherwise publish every later pick at the wrong deadline."""
    import energy_index.documents.fields as fields

    written = fields.series

    def short(records, keys):
        objects = written(records, keys)
        if "row_id" in objects[0]:  # the picks, not the ratios
            objects[0]["row_id"].pop()
        return objects

    monkeypatch.setattr(fields, "series", short)
    out = tmp_path / "index.json"
    result = CliRunner().invoke(main, ["build", "--from", str(GOLDEN), "--profiles", "--out",
                                       str(out)])  # fmt: skip
    assert result.exit_code != 0
    assert (
        "$.picks[0].row_id (Qwen/Qwen3-14B on B200 at median): 6 values where deadlines_ms has 7"
        in result.output
    )
    assert list(tmp_path.iterdir()) == []


def test_a_model_s_gpu_ratios_at_a_statistic_are_one_object_when_its_names_differ():
    """Upstream may name one model_id's configurations differently; the ratios at a statistic
    took each deadline's pick's name, and were split into one object per name (a review's
    finding). They take the unconstrained pick's."""
    frame = pl.DataFrame(
        {
            "model_id": ["a/b"] * 3,
            "nickname": ["B", "B big", "B"],
            "gpu_model": ["B200", "B200", "H100"],
            "num_gpus": [1, 1, 1],
            "max_num_seqs": [8, 64, 8],
            "energy_per_token_joules": [0.5, 0.2, 1.0],
            "median_itl_ms": [10.0, 100.0, 10.0],
        }
    )
    profiles = latency_profiles(frame, statistics=ITL_STATISTICS, deadlines_ms=(20.0, 200.0))
    assert series(profiles["gpu_ratios"], RATIO_KEYS) == [
        {
            "model": "B big", "model_id": "a/b", "itl_statistic": "median",
            "numerator_gpu": "B200", "denominator_gpu": "H100",
            "itl_deadline_ms": [20, 200], "energy_ratio": [0.5, 0.2],
        }
    ]  # fmt: skip


def test_a_deadline_given_joins_the_grid():
    assert profile_deadlines((500.0, 333.0)) == (5, 10, 20, 50, 100, 200, 333, 500)


def test_a_statistic_the_frame_lacks_is_left_out():
    frame = pl.DataFrame(
        {
            "model_id": ["a/b"],
            "nickname": ["B"],
            "gpu_model": ["H100"],
            "num_gpus": [1],
            "max_num_seqs": [8],
            "energy_per_token_joules": [0.5],
            "median_itl_ms": [20.0],
        }
    )
    profiles = latency_profiles(frame, statistics=ITL_STATISTICS, deadlines_ms=(10.0, 50.0))
    assert [(p["itl_statistic"], p["infeasible"]) for p in profiles["picks"]] == [
        ("median", True),
        ("median", False),
    ]
    assert profiles["gpu_ratios"] == []


# -- the index under another statistic ----------------------------------------------------------
def test_the_p99_index_changes_exactly_the_rows_that_bind_in_the_profile(chat_profiles):
    median = build(GOLDEN, settings=BuildSettings(**DATES)).document
    p99 = build(GOLDEN, settings=BuildSettings(itl_statistic="p99", **DATES))
    by_group = {(r["model_id"], r["gpu"]): r["row_id"] for r in median["rows"]}
    changed = {
        (r["model_id"], r["gpu"])
        for r in p99.document["rows"]
        if r["row_id"] != by_group[(r["model_id"], r["gpu"])]
    }
    binding = {(p["model_id"], p["gpu"]) for p in _at(chat_profiles, "p99", 500) if p["binding"]}
    assert len(changed) == 8
    assert changed == binding
    assert "99th-percentile (p99) inter-token latency" in p99.document["selection"]
    assert "99th-percentile (p99) inter-token latency" in p99.document["source"]["selection"]
    assert "leaderboard's" not in p99.document["selection"]
    assert p99.report["parameters"]["itl_statistic"] == "p99"
    assert "median inter-token latency" in median["selection"]


def test_an_unknown_statistic_is_a_usage_error(tmp_path: Path):
    result = CliRunner().invoke(
        main, ["build", "--itl-statistic", "p50", "--out", str(tmp_path / "index.json")]
    )
    assert result.exit_code == 2
    assert "p50" in result.output and "p99" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("statistic", sorted(ITL_STATISTICS))
def test_an_index_built_on_any_statistic_audits_clean_against_its_input(
    tmp_path: Path, statistic: str
):
    """The audit rebuilds with the statistic the index states, not with the median."""
    out = tmp_path / "index.json"
    built = CliRunner().invoke(
        main, ["build", "--from", str(GOLDEN), "--itl-statistic", statistic, "--out", str(out)]
    )
    assert built.exit_code == 0, built.output
    audited = CliRunner().invoke(main, ["audit", "--published", str(out), "--from", str(GOLDEN)])
    assert audited.exit_code == 0, audited.output
    assert "32/32 rows identical, header identical" in audited.output


def test_the_statistic_an_index_states_is_read_from_its_selection_text():
    editorial = editorial_text()
    for statistic in ITL_STATISTICS:
        document = build(GOLDEN, settings=BuildSettings(itl_statistic=statistic, **DATES)).document
        assert stated_itl_statistic(document, editorial) == statistic
    assert stated_itl_statistic({"selection": "something else"}, editorial) == "median"


def test_a_broken_tail_latency_is_refused_when_the_index_selects_on_it(tmp_path: Path):
    """A p99 the rules refuse is a warning while the index ignores it, a refusal once the
    index selects on it (re-attack: a p99 of -5 slipped a pick under a 17.5 ms deadline)."""
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    document["configurations"][0]["p99_itl_ms"] = -5
    snapshot = write_snapshot(tmp_path / "snap", json.dumps(document).encode())
    median = build(snapshot, settings=BuildSettings(**DATES))
    assert any(w["column"] == "p99_itl_ms" for w in median.report["warnings"])
    with pytest.raises(UpstreamFormatError) as refused:
        build(snapshot, settings=BuildSettings(itl_statistic="p99", **DATES))
    assert "p99_itl_ms" in str(refused.value) and "selects on it" in str(refused.value)
    p90 = build(snapshot, settings=BuildSettings(itl_statistic="p90", **DATES))
    assert p90.document["rows"]


def test_series_and_records_of_give_back_the_records_in_each_group_s_order():
    records = [
        {"g": "a", "n": 1, "x": None},
        {"g": "b", "n": 1, "x": 2.0},
        {"g": "a", "n": 2, "x": 3.0},
    ]
    written = series(records, ("g",))
    assert written == [{"g": "a", "n": [1, 2], "x": [None, 3.0]}, {"g": "b", "n": [1], "x": [2.0]}]
    back = [record for group in written for record in records_of(group, ("g",))]
    assert back == [records[0], records[2], records[1]]
    with pytest.raises(ValueError, match="different lengths"):
        list(records_of({"g": "a", "n": [1, 2], "x": [None]}, ("g",)))
