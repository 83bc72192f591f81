"""bench/long_context_mlm.py: the same masked span with the whole passage, only itself, or the context removed."""

import json
import math
import os
import sys

import numpy as np
import pytest

from glue_test_data import REPO, SPM_MODEL, load_bench_script
from test_bad_inputs import assert_one_line_error

from albert_tf.text.tokenization import AlbertTokenizer

long_context = load_bench_script("long_context_mlm")

LONG_CONFIG = os.path.join(REPO, "configs", "albert_tiny_long.json")  # block-sparse past 112 tokens
CORPUS = os.path.join(REPO, "data", "corpus", "pretraining_sample.txt")


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL)


@pytest.fixture(scope="module")
def heldout_file(tmp_path_factory):
    """Three documents of the bundled books: 20 lines, 3 lines (shorter than a passage), 14 lines;
    none of them 1,022 tokens long."""
    with open(CORPUS, encoding="utf-8") as handle:
        lines = [line.rstrip("\n") for line in handle if line.strip()][:37]
    path = tmp_path_factory.mktemp("heldout") / "heldout.txt"
    path.write_text("\n\n".join("\n".join(part) for part in (lines[:20], lines[20:23], lines[23:])) + "\n",
                    encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from albert_tf.config import AlbertConfig
    from albert_tf.models.pretraining_model import AlbertPretrainingModel

    path = str(tmp_path_factory.mktemp("checkpoint") / "model.weights.h5")
    AlbertPretrainingModel(AlbertConfig.from_json_file(LONG_CONFIG)).save_weights(path)
    return path


def test_passages_spans_follow_each_other_and_short_documents_are_counted():
    documents = [list(range(30)), list(range(5)), list(range(17))]
    found, too_short = long_context.passages(documents, passage_length=12, target_length=6)
    # 10 text tokens per passage, spans of 4: starts 0, 4, ... while the passage fits
    assert found == [(0, 0), (0, 4), (0, 8), (0, 12), (0, 16), (0, 20), (2, 0), (2, 4)]
    assert too_short == 1
    spans = [set(range(start + 6, start + 10)) for document, start in found if document == 0]
    assert all(not a & b for i, a in enumerate(spans) for b in spans[i + 1:])


def test_whole_word_mask_takes_whole_words_up_to_the_budget(tokenizer):
    span = tokenizer.encode("Unquestionably the extraordinarily perspicacious governess "
                            "disentangled everything before breakfast, said Mr. Knightley.")
    word_starts = long_context.start_piece_flags(tokenizer.vocab, tokenizer.is_spm)
    starts = [i for i in range(len(span)) if i == 0 or word_starts[span[i]]]
    words = [set(range(a, b)) for a, b in zip(starts, starts[1:] + [len(span)])]
    for seed in range(20):
        positions = long_context.whole_word_mask(span, word_starts, 0.3, np.random.default_rng(seed))
        assert len(positions) == round(0.3 * len(span)) and positions == sorted(set(positions))
        assert all(word <= set(positions) or not word & set(positions) for word in words)
    assert long_context.whole_word_mask(span, word_starts, 0.3, np.random.default_rng(3)) == \
        long_context.whole_word_mask(span, word_starts, 0.3, np.random.default_rng(3))


def test_disjoint_masks_cover_the_span_once_and_start_with_the_single_draw(tokenizer):
    span = tokenizer.encode("It is a truth universally acknowledged, that a single man in possession of a good "
                            "fortune, must be in want of a wife. However little known the feelings or views of "
                            "such a man may be on his first entering a neighbourhood, this truth is so well fixed.")
    word_starts = long_context.start_piece_flags(tokenizer.vocab, tokenizer.is_spm)
    starts = [i for i in range(len(span)) if i == 0 or word_starts[span[i]]]
    words = [set(range(a, b)) for a, b in zip(starts, starts[1:] + [len(span)])]
    budget = round(0.15 * len(span))
    for seed in range(10):
        masks = long_context.disjoint_masks(span, word_starts, 0.15, math.ceil(1 / 0.15), np.random.default_rng(seed))
        assert sorted(p for mask in masks for p in mask) == list(range(len(span)))  # every token once
        assert all(len(mask) <= budget for mask in masks) and len(masks[0]) == budget
        assert all(word <= set(mask) or not word & set(mask) for mask in masks for word in words)
        assert masks[0] == long_context.whole_word_mask(span, word_starts, 0.15, np.random.default_rng(seed))
        two = long_context.disjoint_masks(span, word_starts, 0.15, 2, np.random.default_rng(seed))
        assert two == masks[:2]


def test_the_conditions_share_the_masks_and_the_short_input_is_exactly_the_span(tokenizer):
    text = list(range(100, 130))
    span_length, positions = 8, [1, 2, 6]
    inputs = long_context.condition_inputs(text, positions, span_length, tokenizer)
    whole_ids, whole_mask, whole_targets = inputs["whole_passage"]
    short_ids, short_mask, short_targets = inputs["span_only"]
    removed_ids, removed_mask, removed_targets = inputs["context_removed"]
    span = np.array(text[-span_length:])
    span[positions] = tokenizer.mask_id
    np.testing.assert_array_equal(short_ids, [tokenizer.cls_id, *span, tokenizer.sep_id])
    np.testing.assert_array_equal(short_mask, 1)
    np.testing.assert_array_equal(whole_ids, [tokenizer.cls_id, *text[:-span_length], *span, tokenizer.sep_id])
    np.testing.assert_array_equal(whole_mask, 1)
    np.testing.assert_array_equal(whole_ids[whole_targets], tokenizer.mask_id)
    np.testing.assert_array_equal(short_ids[short_targets], tokenizer.mask_id)
    np.testing.assert_array_equal(whole_targets, removed_targets)
    np.testing.assert_array_equal(whole_targets - short_targets, len(text) - span_length)
    # the control: same length and span positions, everything before the span padding
    context = slice(1, 1 + len(text) - span_length)
    np.testing.assert_array_equal(removed_ids[context], tokenizer.pad_id)
    np.testing.assert_array_equal(removed_mask[context], 0)
    np.testing.assert_array_equal(np.delete(removed_ids, np.r_[context]), short_ids)
    np.testing.assert_array_equal(np.delete(removed_mask, np.r_[context]), 1)


def test_found_only_in_context_marks_masked_tokens_that_only_the_context_shows():
    # context 1 2 3 | span 2 4 9 3 5 with positions 0, 1, 3 masked (tokens 2, 4, 3); 9 and 5 visible
    text = [1, 2, 3, 2, 4, 9, 3, 5]
    flags = long_context.found_only_in_context(text, [0, 1, 3], span_length=5)
    np.testing.assert_array_equal(flags, [True, False, True])  # 4 is not in the context
    # a masked token that the span also shows unmasked is not counted
    np.testing.assert_array_equal(long_context.found_only_in_context([2, 2, 2, 7], [0], span_length=3), [False])
    # an empty subset has no difference
    assert long_context.paired_difference([np.zeros(0)], [np.zeros(0)])["difference"] is None


def test_standard_errors_match_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, (40, 9)), rng.integers(0, 2, (40, 9))
    row = long_context.paired_difference(list(a), list(b))
    per_passage = (a - b).mean(1)
    assert row["difference"] == pytest.approx(a.mean() - b.mean())
    assert row["se_passages"] == pytest.approx(per_passage.std(ddof=1) / math.sqrt(40))
    assert row["se_predictions"] == pytest.approx((a - b).ravel().std(ddof=1) / math.sqrt(360))
    assert row["z_passages"] == pytest.approx(row["difference"] / row["se_passages"])
    # passages of unequal size: the ratio estimator's linearised (clustered) standard error
    a_parts, b_parts = [a[0, :3], a[1], a[2, :5]], [b[0, :3], b[1], b[2, :5]]
    counts = np.array([3.0, 9.0, 5.0])
    sums = np.array([np.sum(x - y) for x, y in zip(a_parts, b_parts)])
    difference = sums.sum() / counts.sum()
    residual_std = np.std(sums - difference * counts, ddof=1)  # the residuals' mean is 0
    row = long_context.paired_difference(a_parts, b_parts)
    assert row["difference"] == pytest.approx(difference)
    assert row["se_passages"] == pytest.approx(residual_std * math.sqrt(3) / counts.sum())
    # no spread, or a single passage: no z
    row = long_context.paired_difference([a[0]], [b[0]])
    assert row["se_passages"] is None and row["z_passages"] is None
    assert long_context.paired_difference(list(a), list(a))["z_predictions"] is None


def _run(monkeypatch, capsys, *flags):
    monkeypatch.setattr(sys, "argv", ["long_context_mlm.py", *flags])
    code = long_context.main()
    return code, capsys.readouterr()


def test_the_comparison_runs_on_the_bundled_books(monkeypatch, capsys, heldout_file, checkpoint, tokenizer, tmp_path):
    out = tmp_path / "result.json"
    flags = [f"--init_checkpoint={checkpoint}", f"--albert_config_file={LONG_CONFIG}", f"--spm_model_file={SPM_MODEL}",
             f"--heldout_file={heldout_file}", "--passage_length=256", "--target_length=64", "--batch_size=3"]
    code, output = _run(monkeypatch, capsys, *flags, f"--json={out}")
    assert code == 0, output.err
    result = json.loads(out.read_text())
    documents = long_context.read_documents(heldout_file, tokenizer)
    expected, too_short = long_context.passages(documents, 256, 64)
    assert result["documents"] == 3 and result["documents_too_short"] == too_short == 1
    assert result["passages"] == len(expected) > 2
    assert result["predictions"] == result["passages"] * round(0.15 * 62)
    assert set(result["conditions"]) == set(long_context.CONDITIONS)
    assert all(0 <= row["accuracy"] <= 1 and row["loss"] > 0 for row in result["conditions"].values())
    assert "whole_passage - span_only" in result["comparisons"] and "| span_only |" in output.out

    # every token of every span asked once, in 7 draws
    code, output = _run(monkeypatch, capsys, *flags, "--mask_draws=7", f"--json={out}")
    assert code == 0, output.err
    covered = json.loads(out.read_text())
    assert covered["mask_draws"] == 7 and covered["passages"] == result["passages"]
    assert covered["predictions"] == result["passages"] * 62
    assert all(0 <= row["accuracy"] <= 1 and row["loss"] > 0 for row in covered["conditions"].values())
    only_context = covered["found_only_in_context"]
    assert 0 < only_context["predictions"] < covered["predictions"]
    assert set(only_context["conditions"]) == set(long_context.CONDITIONS)
    assert "predictions whose token only the context holds" in output.out


@pytest.mark.parametrize("flag, words", [
    ("--target_length=256", ["--target_length", "below --passage_length"]),
    ("--passage_length=8192", ["--passage_length", "max_position_embeddings"]),
    ("--mask_rate=0", ["--mask_rate"]),
    ("--batch_size=0", ["--batch_size"]),
    ("--mask_draws=8", ["--mask_draws", "ceil(1 / --mask_rate) = 7"]),
    ("--heldout_file=/nonexistent/heldout.txt", ["--heldout_file", "/nonexistent/heldout.txt"]),
    ("--passage_length=1024", ["--heldout_file", "1022 tokens"]),
])
def test_bad_flags_are_one_line_errors(monkeypatch, capsys, heldout_file, checkpoint, tmp_path, flag, words):
    out = tmp_path / "result.json"
    code, output = _run(monkeypatch, capsys, f"--init_checkpoint={checkpoint}", f"--albert_config_file={LONG_CONFIG}",
                        f"--spm_model_file={SPM_MODEL}", f"--heldout_file={heldout_file}", "--passage_length=256",
                        "--target_length=64", f"--json={out}", flag)
    assert_one_line_error(code, output.err, *words)
    assert not out.exists()
