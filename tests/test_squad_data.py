"""SQuAD reading, character alignment, windows and features on the shipped sample and hand-made files."""

import json
import os

import pytest

from albert_tf.squad import alignment, features
from albert_tf.squad.evaluation import evaluate_v2
from albert_tf.squad.examples import read_squad_examples
from albert_tf.text.tokenization import AlbertTokenizer, preprocess_text
from squad_test_data import SPM_MODEL, SQUAD_DEV, SQUAD_TRAIN, write_squad


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL)


def _build(examples, tokenizer, max_seq_length=384, doc_stride=128, max_query_length=64, is_training=True):
    generator = features.convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride,
                                                      max_query_length, is_training)
    built = []
    while True:
        try:
            built.append(next(generator))
        except StopIteration as done:
            return built, done.value


def _span_text(feature, example, start, end):
    begin = feature.tok_start_to_orig_index[start - feature.doc_offset]
    finish = feature.tok_end_to_orig_index[end - feature.doc_offset]
    return example.paragraph_text[begin:finish + 1].strip()


def test_reads_the_sample_files():
    dev = read_squad_examples(SQUAD_DEV, is_training=False, version_2_with_negative=True)
    train = read_squad_examples(SQUAD_TRAIN, is_training=True, version_2_with_negative=True)
    assert (len(dev), sum(e.is_impossible for e in dev)) == (34, 22)
    assert (len(train), sum(e.is_impossible for e in train)) == (36, 20)
    first = train[0]
    assert first.qas_id == "56ddde6b9a695914005b9628" and first.answer_text == "France"
    assert first.paragraph_text[first.start_position:first.start_position + 6] == "France"
    assert all(e.start_position == -1 and e.answer_text == "" for e in train if e.is_impossible)


def test_reading_errors_name_the_file_and_question(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.json"):
        read_squad_examples(str(tmp_path / "missing.json"), False, True)
    two_answers = write_squad(tmp_path / "two.json", [{"context": "Paris is big.", "qas": [
        {"id": "q1", "question": "What?", "answers": [{"text": "Paris", "answer_start": 0}] * 2}]}])
    with pytest.raises(ValueError, match="q1: a training question needs exactly 1 answer"):
        read_squad_examples(two_answers, is_training=True, version_2_with_negative=False)
    assert len(read_squad_examples(two_answers, is_training=False, version_2_with_negative=False)) == 1
    with pytest.raises(ValueError, match="needs version_2_with_negative$"):
        read_squad_examples(SQUAD_DEV, is_training=False, version_2_with_negative=False)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not a JSON file"):
        read_squad_examples(str(bad), False, True)


def test_windows_and_max_context():
    windows = features.doc_windows(10, max_tokens_for_doc=4, doc_stride=2)
    assert windows == [(0, 4), (2, 4), (4, 4), (6, 4)]
    # Piece 3: window 0 gives min(3, 0) + 0.04, window 1 min(1, 2) + 0.04 -> window 1.
    assert features.max_context_window(windows, 3) == 1
    assert features.max_context_window(windows, 0) == 0
    assert features.max_context_window(windows, 9) == 3
    assert features.doc_windows(3, 4, 2) == [(0, 3)]


def test_alignment_maps_pieces_back_through_accents_and_spaces(tokenizer):
    text = "Café  Noël met  ÉMILE in 1990, in Zürich."
    pieces = tokenizer.tokenize(text)
    aligned = alignment.align(text, pieces, do_lower_case=True)
    recovered = [text[s:e + 1] for s, e in zip(aligned.tok_start_to_orig_index, aligned.tok_end_to_orig_index)]
    # Every piece maps to the original characters it came from (accents and case kept).
    assert [piece.replace("\u2581", "") for piece in pieces] == [
        preprocess_text(chunk).replace(" ", "") for chunk in recovered]
    start = text.index("ÉMILE")
    first, last = aligned.token_span(start, start + len("ÉMILE") - 1)
    assert text[aligned.tok_start_to_orig_index[first]:aligned.tok_end_to_orig_index[last] + 1].strip() == "ÉMILE"


def test_convert_index_fills_unaligned_positions():
    index = [None, 3, None, None, 7, None]
    assert alignment.convert_index(index, 1) == 3
    assert alignment.convert_index(index, 2, is_start=True) == 4  # right of the left neighbour
    assert alignment.convert_index(index, 3, is_start=False) == 6  # left of the right neighbour
    assert alignment.convert_index(index, 0, is_start=True) == 0
    assert alignment.convert_index(index, 0, is_start=False) == 2
    assert alignment.convert_index(index, 5, length=10, is_start=True) == 8
    assert alignment.convert_index(index, 5, length=10, is_start=False) == 9
    assert alignment.convert_index([None, 4, 5, None], 3, is_start=True) == 5


def test_training_answers_map_to_their_pieces(tokenizer):
    examples = read_squad_examples(SQUAD_TRAIN, is_training=True, version_2_with_negative=True)
    built, stats = _build(examples, tokenizer)
    positives = [f for f in built if not f.is_impossible]
    assert len(positives) == 16 and stats.num_dropped_examples == 0
    for feature in positives:
        example = examples[feature.example_index]
        assert _span_text(feature, example, feature.start_position, feature.end_position) == example.answer_text
    for feature in built:
        if feature.is_impossible:
            assert feature.start_position == feature.end_position == 0


def test_short_windows_layout_and_out_of_span_answers(tokenizer):
    examples = read_squad_examples(SQUAD_TRAIN, is_training=True, version_2_with_negative=True)
    built, stats = _build(examples, tokenizer, max_seq_length=64, doc_stride=16, max_query_length=8)
    assert stats.num_features == len(built) > len(examples)
    assert stats.num_out_of_span > 0
    assert stats.num_positive + stats.num_impossible == stats.num_features
    for feature in built:
        assert len(feature.input_ids) <= 64 and feature.doc_offset <= 8 + 2
        n = len(feature.tok_start_to_orig_index)
        assert feature.input_ids[0] == tokenizer.cls_id
        assert feature.input_ids[feature.doc_offset - 1] == tokenizer.sep_id
        assert feature.input_ids[-1] == tokenizer.sep_id and len(feature.input_ids) == feature.doc_offset + n + 1
        assert feature.p_mask == [0] + [1] * (feature.doc_offset - 1) + [0] * n + [1]
        assert feature.segment_ids == [0] * feature.doc_offset + [1] * (n + 1)
    # Each paragraph piece is "max context" in exactly one window of its question.
    for index in range(len(examples)):
        windows = [f for f in built if f.example_index == index]
        total = sum(sum(f.token_is_max_context) for f in windows)
        pieces = {o for f in windows for o in zip(f.tok_start_to_orig_index, f.tok_end_to_orig_index)}
        assert total == len(pieces)
    # The answer of an in-span window is still the gold text.
    for feature in built:
        if not feature.is_impossible:
            example = examples[feature.example_index]
            assert _span_text(feature, example, feature.start_position, feature.end_position) == example.answer_text


def test_feature_cache_round_trip(tmp_path, tokenizer):
    examples = read_squad_examples(SQUAD_DEV, is_training=False, version_2_with_negative=True)
    args = (SQUAD_DEV, examples, tokenizer, str(tmp_path), 128, 64, 32, False, True)
    path, stats = features.cached_features(*args)
    built, expected_stats = _build(examples, tokenizer, 128, 64, 32, is_training=False)
    assert stats["num_features"] == expected_stats.num_features == len(built)
    assert features.read_features(path) == built
    modified = os.path.getmtime(path)
    assert features.cached_features(*args)[0] == path and os.path.getmtime(path) == modified
    batch_features, batch_labels = next(iter(features.make_dataset(path, 4, 128)))
    assert batch_features["input_word_ids"].shape == (4, 128)
    assert batch_features["p_mask"].numpy()[0].tolist() == built[0].p_mask + [1] * (128 - len(built[0].p_mask))
    assert json.loads(open(path + ".json").read())["num_features"] == len(built)


def test_sample_counts_at_the_readme_settings(tokenizer):
    """The numbers docs/squad_race.md gives for the shipped sample (sequence 384, stride 128)."""
    _, train_stats = _build(read_squad_examples(SQUAD_TRAIN, True, True), tokenizer)
    assert (train_stats.num_features, train_stats.num_positive, train_stats.num_out_of_span) == (36, 16, 0)
    dev = read_squad_examples(SQUAD_DEV, False, True)
    _, dev_stats = _build(dev, tokenizer, is_training=False)
    assert (dev_stats.num_features, dev_stats.num_dropped_examples) == (40, 0)
    with open(SQUAD_DEV) as handle:
        dataset = json.load(handle)["data"]
    # Answering "no answer" everywhere scores the unanswerable share: 22 of 34.
    report = evaluate_v2(dataset, {e.qas_id: "" for e in dev})
    assert report["exact"] == report["f1"] == pytest.approx(100 * 22 / 34)
