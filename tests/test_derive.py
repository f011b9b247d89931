from __future__ import annotations

import re

import polars as pl
import pytest

from energy_index.documents.editorial import editorial_text
from energy_index.errors import DerivationError
from energy_index.steps import derive
from energy_index.steps.derive import (
    SLUG_LENGTH,
    index_row,
    index_rows,
    rows_in_order,
    slug,
    unprintable_characters,
    wh_per_million_tokens,
)
from energy_index.steps.row_fields import ROW_NAMES
from energy_index.steps.selection import selected_configurations
from energy_index.steps.stability import stable_configurations
from energy_index.steps.validate import validated_configurations
from tests.conftest import fixture_bytes, upstream_file

LABELS = editorial_text()["precision_labels"]


def rows_of(name: str):
    frame = validated_configurations(upstream_file(fixture_bytes(name))).frame
    selection = selected_configurations(stable_configurations(frame).stable)
    return index_rows(selection.selected, precision_labels=LABELS)


def test_rows_carry_the_published_keys_in_order(published):
    assert list(published["rows"][0]) == list(ROW_NAMES)
    assert all(list(row) == list(ROW_NAMES) for row in rows_of("edge-cases.json"))


def test_rounding_is_pythons_round_where_polars_differs():
    row = {r["model_id"]: r for r in rows_of("edge-cases.json")}["org/test-8b"]
    full = wh_per_million_tokens(0.215694)
    assert row["wh_per_million_output_tokens"] == round(full, 2) == 59.91
    # The trap this guards against: polars rounds the same float to 59.92.
    assert pl.Series([full]).round(2)[0] == 59.92


def test_derived_fields_of_one_row():
    row = {r["model_id"]: r for r in rows_of("edge-cases.json")}["org/repeat-fp8"]
    assert row["precision"] == "FP8"
    assert row["slug"] == "repeat-model-fp8"
    assert row["row_id"] == "repeat-model-fp8/H100/2/256"
    assert row["joules_per_output_token"] == 0.1
    assert row["avg_requests_in_flight"] == row["avg_running_batch"] == 251.0
    assert row["gpu_power_watts_total"] == 700
    assert isinstance(row["gpu_power_watts_total"], int)
    assert isinstance(row["avg_output_tokens"], int)
    assert isinstance(row["params_b"], float)


def test_rows_are_sorted_by_wh_then_row_id():
    rows = rows_of("edge-cases.json")
    keys = [(r["wh_per_million_output_tokens"], r["row_id"]) for r in rows]
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    ("nickname", "expected"),
    [
        ("Llama 3.1 8B Instruct", "llama-3-1-8b-instruct"),
        ("Qwen 3 235B A22B Instruct FP8", "qwen-3-235b-a22b-instruct-fp8"),
        ("PixArt-Σ", "pixart"),
        ("  GPT (oss) 20B ", "gpt-oss-20b"),
    ],
)
def test_slug(nickname, expected):
    assert slug(nickname) == expected


def test_a_long_slug_is_cut_with_a_hash_of_the_whole():
    # A slug names files (api/v1/models/<slug>.json, cards/…/<slug>/): 300 characters from
    # upstream made a name no filesystem takes. Cut to 53, then '-' and 10 hex digits of the
    # sha256 of the whole slug: short, deterministic, and distinct for names sharing a start.
    long = slug("Qwen 3 8B " + "x" * 290)
    assert long == "qwen-3-8b-" + "x" * 43 + "-" + "0dcffefa70"
    assert len(long) == SLUG_LENGTH == 64
    assert slug("Qwen 3 8B " + "x" * 289 + "y") != long
    assert slug("a" * 64) == "a" * 64  # at the limit: kept whole
    assert len(slug("a" * 65)) == 64
    # A cut that ends on '-' does not leave two in a row (the schema's pattern).
    cut = slug("a" * 52 + " " + "b" * 20)
    assert "--" not in cut and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", cut)


def test_a_name_without_an_ascii_letter_or_digit_has_a_slug_of_its_own():
    """Review finding: "日本" made the slug "", so a card at cards/<task>//index.html (the task's
    card notes) and a row_id with nothing before its first '/'. Its own hash names it instead,
    apart from any other such name, and within the schema's pattern."""
    assert slug("日本") == "cf2abf0c5b"
    assert slug("---") == "cb3f91d54e"
    assert slug("日本") != slug("中国")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug("日本"))


def test_a_precision_without_a_label_names_the_model_and_gpu():
    frame = two_configurations(weight_precision=["bfloat16", "int3"])
    with pytest.raises(DerivationError, match=r"^a/x on H100: weight_precision 'int3' has no"):
        index_rows(frame, precision_labels=LABELS)


def test_a_precision_without_a_label_is_a_clear_error():
    with pytest.raises(DerivationError, match="weight_precision 'int3' has no label"):
        rows_of("unknown-precision.json")
    frame = validated_configurations(upstream_file(fixture_bytes("unknown-precision.json"))).frame
    with pytest.raises(DerivationError, match=r"\(known: bfloat16 → BF16, fp8 → FP8\); add it"):
        index_rows(frame, precision_labels={"fp8": "FP8", "bfloat16": "BF16"})


def two_configurations(**columns: list) -> pl.DataFrame:
    """Two configurations of a small model on one H100, with the given columns replaced."""
    frame = pl.DataFrame(
        {
            "model_id": ["a/x", "a/x"],
            "nickname": ["Model X", "Model X"],
            "gpu_model": ["H100", "H100"],
            "num_gpus": [1, 1],
            "max_num_seqs": [8, 8],
            "weight_precision": ["bfloat16", "bfloat16"],
            "total_params_billions": [1.0, 1.0],
            "activated_params_billions": [1.0, 1.0],
            "energy_per_token_joules": [0.1, 0.1],
            "avg_output_len": [10.0, 10.0],
            "avg_batch_size": [8.0, 8.0],
            "avg_power_watts": [100.0, 100.0],
            "median_itl_ms": [10.0, 10.0],
        }
    )
    return frame.with_columns(pl.Series(name, values) for name, values in columns.items())


def test_a_frame_that_is_not_a_selection_is_refused_by_row_id():
    # A repeated run of one model: two rows with one row_id. Only a selection reaches index_rows.
    with pytest.raises(DerivationError) as caught:
        index_rows(two_configurations(), precision_labels=LABELS)
    assert str(caught.value) == (
        "row_id model-x/H100/1/8 stands for two models (a/x and a/x): their nicknames give the "
        "same slug"
    )


def test_a_repeated_row_beside_another_gpu_is_named_by_its_row_id_not_the_gpus():
    # The GPUs' slugs (b200, h100) are apart: only the row_id is shared.
    frame = pl.concat([two_configurations(), two_configurations(gpu_model=["B200", "B200"])[:1]])
    with pytest.raises(DerivationError, match=r"^row_id model-x/H100/1/8 stands for two models"):
        index_rows(frame, precision_labels=LABELS)


def test_models_apart_by_slug_on_gpus_whose_slugs_collide_are_refused_naming_the_gpus():
    frame = two_models(nickname=["Model X", "Model Y"], gpu_model=["H100", "h100"])
    with pytest.raises(DerivationError, match=r"^GPUs H100 and h100 have the same slug h100: "):
        index_rows(frame, precision_labels=LABELS)


def test_rows_are_walked_for_collisions_only_when_the_columns_find_one(monkeypatch):
    # The collision check asks the columns at once; the rows are walked (and a collision named)
    # only when the columns find one: not for distinct rows, nor for no rows at all.
    walked: list = []
    monkeypatch.setattr(derive, "_refuse_collisions", walked.append)
    index_rows(two_models(nickname=["Model X", "Model Y"]), precision_labels=LABELS)
    index_rows(two_models().head(0), precision_labels=LABELS)
    assert walked == []
    for colliding in (
        two_models(nickname=["Model X", "Model-X"], gpu_model=["H100", "B200"]),
        two_models(nickname=["Model X", "Model Y"], gpu_model=["H100", "h100"]),
        two_configurations(),
    ):
        index_rows(colliding, precision_labels=LABELS)
    assert len(walked) == 3


def test_index_row_is_asked_only_of_the_configurations_it_may_refuse(monkeypatch):
    # index_rows derives whole columns; a configuration goes to index_row (for its refusal, word
    # for word) only if a name is unprintable or its precision has no label. A no-break space is
    # unprintable yet allowed: that configuration is asked, refused not, and published.
    asked: list = []
    monkeypatch.setattr(derive, "index_row", lambda c, labels: asked.append(c["nickname"]))
    rows = index_rows(two_models(nickname=["Model X", "Model\u00a0Y"]), precision_labels=LABELS)
    assert asked == ["Model\u00a0Y"]
    assert [row["slug"] for row in rows] == ["model-x", "model-y"]
    index_rows(two_models(nickname=["Model X", "Model Y"]), precision_labels=LABELS)
    assert asked == ["Model\u00a0Y"]


def test_a_name_with_control_or_bidirectional_characters_is_refused():
    frame = two_configurations(nickname=["Model X", "Evil\u202e X\n \u202e"])
    expected = (
        "'a/x' on 'H100': nickname 'Evil\\u202e X\\n \\u202e' holds control or bidirectional "
        "character(s) U+202E, U+000A; refused, not published"
    )
    with pytest.raises(DerivationError) as caught:
        index_rows(frame, precision_labels=LABELS)
    assert str(caught.value) == expected


def two_models(**columns: list) -> pl.DataFrame:
    """Two models, a/x and b/x, on one H100, with the given columns replaced."""
    return two_configurations(model_id=["a/x", "b/x"], **columns)


def test_slugs_collide_even_when_gpus_keep_row_ids_apart():
    frame = two_models(nickname=["Model X", "Model-X"], num_gpus=[1, 2], gpu_model=["H100", "B200"])
    with pytest.raises(DerivationError, match="models a/x and b/x have the same slug model-x"):
        index_rows(frame, precision_labels=LABELS)


# "H100" and "h100" are two row_ids but one card's name (cards/<task>/<model>/index.html#h100):
# the second card could not be told from the first.
@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        ({"model_id": ["a/x", "b/x"], "nickname": ["Model X", "Model-X"]},
         "models a/x and b/x have the same slug model-x: their rows could not be told apart by "
         "slug (nor by row_id on the same GPUs)"),
        ({"gpu_model": ["H100", "h100"]},
         "GPUs H100 and h100 have the same slug h100: their rows could not be told apart by "
         "slug (nor their cards by path)"),
    ],
    ids=["models", "gpus"],
)  # fmt: skip
def test_two_models_or_gpus_whose_slugs_collide_are_refused(columns: dict, expected: str):
    with pytest.raises(DerivationError) as caught:
        index_rows(two_configurations(**columns), precision_labels=LABELS)
    assert str(caught.value) == expected


def test_distinct_slugs_give_distinct_row_ids():
    rows = index_rows(two_models(nickname=["Model X", "Model Y"]), precision_labels=LABELS)
    assert [row["row_id"] for row in rows] == ["model-x/H100/1/8", "model-y/H100/1/8"]


def test_a_name_with_many_refused_characters_names_the_first_five_and_counts_the_rest():
    def refusal(nickname: str) -> str:
        with pytest.raises(DerivationError) as caught:
            index_rows(two_configurations(nickname=["Model X", nickname]), precision_labels=LABELS)
        return str(caught.value)

    five = "U+0001, U+0002, U+0003, U+0004, U+0005"
    assert f"character(s) {five}; refused" in refusal("M\x01\x02\x03\x04\x05")
    assert f"character(s) {five} and 1 more; refused" in refusal("M\x01\x02\x03\x04\x05\x06")
    assert f"character(s) {five} and 2 more; refused" in refusal("M\x01\x02\x03\x04\x05\x06\x07")


def test_unprintable_characters_are_named_by_code_point():
    assert unprintable_characters("Qwen 3 14B é ü 日本") == []
    assert unprintable_characters("a\u202eb\nc\u200b\u2028") == [
        "U+202E",
        "U+000A",
        "U+200B",
        "U+2028",
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [("nickname", "Model\u202eY"), ("model_id", "b/y\u0007"), ("gpu_model", "H1\n00")],
)
def test_every_name_field_is_checked(field, value):
    names = {"model_id": ["a/x", "b/x"], "nickname": ["Model X", "Model Y"]}
    names[field] = [names.get(field, ["H100"])[0], value]
    frame = two_configurations(**names)
    with pytest.raises(DerivationError) as caught:
        index_rows(frame, precision_labels=LABELS)
    message = str(caught.value)
    assert f"{field} {value!a} holds control or bidirectional character(s)" in message
    assert value not in message  # shown escaped, never as it is


def test_the_printable_fast_path_lets_no_refused_character_through():
    # unprintable_characters answers [] at once for a printable text (issue #16): that is exact
    # only if every character of a refused category is unprintable to Python, in every plane.
    import unicodedata

    from energy_index.steps.derive import _UNPRINTABLE_CATEGORIES, unprintable_characters

    through = [
        cp
        for cp in range(0x110000)
        if unicodedata.category(chr(cp)) in _UNPRINTABLE_CATEGORIES and chr(cp).isprintable()
    ]
    assert through == []
    assert unprintable_characters("Qwen 3 32B\u202e") == ["U+202E"]
    assert unprintable_characters("Qwen\u00a03") == []  # a no-break space: unprintable, not refused


@pytest.mark.parametrize("fixture", ["edge-cases.json", "stress.json", "tie-breaks.json"])
@pytest.mark.parametrize("itl_column", ["median_itl_ms", "p99_itl_ms"])
def test_the_rows_a_column_at_a_time_are_index_row_of_each_configuration(fixture, itl_column):
    # index_rows derives whole columns; the report page derives each configuration with
    # index_row. The two read one declaration (ROW_FIELDS) and must give the same rows.
    frame = validated_configurations(upstream_file(fixture_bytes(fixture))).frame
    selected = selected_configurations(
        stable_configurations(frame).stable, itl_column=itl_column
    ).selected
    deciding = itl_column if itl_column != "median_itl_ms" else None
    one_by_one = [index_row(c, LABELS, deciding=deciding) for c in selected.iter_rows(named=True)]
    one_by_one.sort(key=lambda row: (row["wh_per_million_output_tokens"], row["row_id"]))
    rows = index_rows(selected, precision_labels=LABELS, itl_column=itl_column)
    assert len(rows) > 1
    assert [list(row.items()) for row in rows] == [list(row.items()) for row in one_by_one]
    assert [type(v) for row in rows for v in row.values()] == [
        type(v) for row in one_by_one for v in row.values()
    ]


def test_of_several_refused_configurations_the_first_in_the_frame_is_named():
    frame = two_configurations(
        nickname=["Model\u202eX", "Model X"], weight_precision=["bfloat16", "int3"]
    )
    with pytest.raises(DerivationError, match="U\\+202E"):
        index_rows(frame, precision_labels=LABELS)
    with pytest.raises(DerivationError, match="int3"):
        index_rows(frame.reverse(), precision_labels=LABELS)


def test_no_selected_configuration_gives_no_rows():
    # A deadline of the sweep that no configuration meets (the report's and the site's sweep
    # starts at 50 ms): index_rows stopped on None > 1 asking the empty columns for collisions.
    frame = validated_configurations(upstream_file(fixture_bytes("edge-cases.json"))).frame
    assert index_rows(frame.head(0), precision_labels=LABELS) == ()


@pytest.mark.parametrize("itl_column", [None, "median_itl_ms", "p99_itl_ms"])
def test_rows_in_order_are_index_row_of_every_configuration_repeats_kept(itl_column):
    # The configurations page shows every configuration, repeated runs too (one row_id each).
    frame = validated_configurations(upstream_file(fixture_bytes("edge-cases.json"))).frame
    chosen = {} if itl_column is None else {"itl_column": itl_column}
    deciding = "p99_itl_ms" if itl_column == "p99_itl_ms" else None
    rows = rows_in_order(frame, precision_labels=LABELS, **chosen)
    expected = [index_row(c, LABELS, deciding=deciding) for c in frame.iter_rows(named=True)]
    assert [list(row.items()) for row in rows] == [list(row.items()) for row in expected]
    assert len({row["row_id"] for row in rows}) < len(rows) == frame.height
