"""The generated data has the algorithm's statistics, on the bundled corpus (real text).

Rates are measured from the TFRecords themselves where the file holds the information (masking
budget, 80/10/10, labels) and from the statistics file otherwise (drawn n-gram sizes, pair
kinds). Tolerances are 4 standard deviations of the binomial at the sample size, so a correct
implementation passes with overwhelming probability and a biased one fails.
"""

import json
import math

import pytest
import tensorflow as tf

from data_prep import tfrecord
from data_prep.create_pretraining_data import build

SPM_MODEL = "data/albert_spm/30k-clean.model"
CORPUS = "data/corpus/sample.txt"
MASK_ID = 4


def four_sigma(p, n):
    return 4 * math.sqrt(p * (1 - p) / n)


def build_and_read(tmp_path_factory, corpus_path, **settings):
    output = str(tmp_path_factory.mktemp("data") / "train.tfrecord")
    result = build(input_file=corpus_path, output_file=output, spm_model_file=SPM_MODEL,
                   max_seq_length=128, num_workers=1, show_progress=False, **settings)
    examples = []
    for record in tfrecord.read_records(output):
        features = tf.train.Example.FromString(record).features.feature
        examples.append({name: list(features[name].int64_list.value or features[name].float_list.value)
                         for name in features})
    assert examples and json.load(open(result["stats_file"])) == result["stats"]
    return examples, result["stats"]


@pytest.fixture(scope="module")
def default_data(tmp_path_factory):
    return build_and_read(tmp_path_factory, CORPUS, dupe_factor=2)


@pytest.fixture(scope="module")
def line_documents(tmp_path_factory):
    """The corpus with every line made its own document: all chunks are single lines."""
    path = tmp_path_factory.mktemp("corpus") / "line_documents.txt"
    with open(CORPUS, encoding="utf-8") as handle:
        path.write_text("\n\n".join(line.strip() for line in handle if line.strip()) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.slow
def test_masking_budget_and_effective_rate(default_data):
    examples, stats = default_data
    tokens = masked = budget = 0
    for example in examples:
        length = sum(example["input_mask"])
        count = int(sum(example["masked_lm_weights"]))
        expected = min(20, max(1, round(length * 0.15)))
        assert count <= expected
        tokens, masked, budget = tokens + length, masked + count, budget + expected
    assert len(examples) > 2500
    assert masked / budget > 0.995  # whole-word spans almost always fill the budget exactly
    assert stats["tokens"] == tokens and stats["masked_tokens"] == masked
    assert stats["effective_masking_rate"] == pytest.approx(masked / tokens)
    assert abs(masked / tokens - budget / tokens) < 0.001
    assert 0.145 < masked / tokens < 0.15  # round(128 * 0.15) = 19 of 128 for full sequences


@pytest.mark.slow
def test_replacements_are_80_10_10(default_data):
    examples, stats = default_data
    kinds = {"mask_token": 0, "kept": 0, "random_token": 0}
    for example in examples:
        for position, label, weight in zip(example["masked_lm_positions"], example["masked_lm_ids"],
                                           example["masked_lm_weights"]):
            if weight:
                token = example["input_ids"][position]
                kinds["mask_token" if token == MASK_ID else "kept" if token == label else "random_token"] += 1
    total = sum(kinds.values())
    assert total == stats["masked_tokens"] > 40000
    for kind, p in (("mask_token", 0.8), ("kept", 0.1), ("random_token", 0.1)):
        assert abs(kinds[kind] / total - p) < four_sigma(p, total), kinds
        # A random id equals the label with probability 1/30000, so the file and the counters agree.
        assert stats["mask_replacement_fractions"][kind] == pytest.approx(kinds[kind] / total, abs=0.001)


@pytest.mark.slow
def test_ngram_sizes_are_drawn_with_p_proportional_to_one_over_n(default_data):
    _, stats = default_data
    drawn = stats["raw"]["ngram_drawn"]
    total = sum(drawn.values())
    assert total > 30000
    for n, p in (("1", 6 / 11), ("2", 3 / 11), ("3", 2 / 11)):
        assert abs(drawn[n] / total - p) < four_sigma(p, total), drawn
    masked = stats["ngram_masked_span_fractions"]
    # Accepted spans favour short n-grams further (long ones overlap or overshoot more often).
    assert masked["1"] > 6 / 11 and masked["3"] < 2 / 11 and masked["3"] > 0.1


@pytest.mark.slow
def test_sentence_order_labels_are_balanced_for_multi_line_chunks(default_data):
    examples, stats = default_data
    pairs = stats["sentence_pairs"]
    ordered = pairs["in_order"] + pairs["swapped"]
    assert abs(pairs["swapped"] / ordered - 0.5) < four_sigma(0.5, ordered)
    labels = sum(example["next_sentence_labels"][0] for example in examples)
    assert labels == pairs["swapped"] + pairs["random_document"]
    assert pairs["label_1_fraction"] == pytest.approx(labels / len(examples))


@pytest.mark.slow
def test_one_line_documents_get_random_document_negatives_as_in_the_original(tmp_path_factory, line_documents):
    examples, stats = build_and_read(tmp_path_factory, line_documents, dupe_factor=1)
    assert stats["documents"] > 4000
    assert stats["sentence_pairs"]["random_document"] == len(examples)
    assert all(example["next_sentence_labels"] == [1] for example in examples)
    # The target length is drawn once per document: one instance per one-line document.
    assert abs(stats["short_target_fraction"] - 0.1) < four_sigma(0.1, len(examples))


@pytest.mark.slow
def test_without_single_segment_negatives_labels_are_balanced(tmp_path_factory, line_documents):
    examples, stats = build_and_read(tmp_path_factory, line_documents, dupe_factor=1,
                                     sop_single_segment_random_negatives=False)
    assert stats["sentence_pairs"]["random_document"] == 0
    labels = sum(example["next_sentence_labels"][0] for example in examples)
    assert abs(labels / len(examples) - 0.5) < four_sigma(0.5, len(examples))


@pytest.mark.slow
def test_at_512_tokens_the_cap_of_20_masks_about_4_percent(tmp_path):
    # google-research/albert #51: min(20, round(512 * 0.15) = 77) masks 3.9% of a full sequence.
    settings = dict(input_file=CORPUS, spm_model_file=SPM_MODEL, max_seq_length=512, dupe_factor=1,
                    num_workers=1, show_progress=False)
    capped = build(output_file=str(tmp_path / "capped"), **settings)["stats"]
    uncapped = build(output_file=str(tmp_path / "uncapped"), max_predictions_per_seq=77, **settings)["stats"]
    assert 0.038 < capped["effective_masking_rate"] < 0.040
    assert 0.145 < uncapped["effective_masking_rate"] < 0.155
