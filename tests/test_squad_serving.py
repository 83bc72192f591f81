"""The SQuAD SavedModel answers raw text in a fresh process (TensorFlow and tensorflow-text only), as the
Python post-processing answers the same paragraphs: one window, and many windows with the answer
in a later one."""

import json

import keras
import pytest

from albert_tf.config import AlbertConfig
from albert_tf.models.question_answering_model import AlbertQuestionAnswering
from albert_tf.serving.squad_export import export_squad
from albert_tf.squad import features, postprocess
from albert_tf.squad.examples import read_squad_examples
from albert_tf.text.tokenization import AlbertTokenizer
from albert_tf.squad.prediction import raw_results
from squad_test_data import SPM_MODEL, SQUAD_DEV, TINY_CONFIG, serve_squad, write_squad

DOC_STRIDE = 128


def _single_window_examples(tokenizer, max_seq_length):
    """Dev questions whose paragraph fits one window and is ASCII (where piece offsets are exact)."""
    examples = read_squad_examples(SQUAD_DEV, is_training=False, version_2_with_negative=True)
    built = list(features.convert_examples_to_features(examples, tokenizer, max_seq_length, DOC_STRIDE, 64, False))
    counts = {}
    for feature in built:
        counts[feature.example_index] = counts.get(feature.example_index, 0) + 1
    chosen = [e for i, e in enumerate(examples) if counts.get(i) == 1 and e.paragraph_text.isascii()]
    return SQUAD_DEV, chosen[:12]


def _long_context_examples(tmp_path):
    """The dev questions on ASCII paragraphs, each asked about all those paragraphs joined (many windows)."""
    with open(SQUAD_DEV, encoding="utf-8") as handle:
        paragraphs = [p for article in json.load(handle)["data"] for p in article["paragraphs"]
                      if p["context"].isascii()]
    context = " ".join(p["context"] for p in paragraphs)
    qas = [{"id": qa["id"], "question": qa["question"], "answers": [], "is_impossible": True}
           for p in paragraphs for qa in p["qas"]]
    path = write_squad(tmp_path / "long.json", [{"context": context, "qas": qas}])
    return path, read_squad_examples(path, is_training=False, version_2_with_negative=True)


def _python_answers(model, source, examples, tokenizer, cache_dir, max_seq_length, doc_stride, threshold):
    """({qas_id: answer}, {qas_id: no-answer score} or None, features) of the Python runner's path."""
    path, _ = features.cached_features(source, examples, tokenizer, cache_dir, max_seq_length, doc_stride, 64,
                                       False, True)
    built = features.read_features(path)
    results = raw_results(model, features.make_dataset(path, 8, max_seq_length), built)
    if model.version_2_with_negative:
        answers, _, null_odds = postprocess.predictions_v2(examples, built, results, 20, 30, threshold)
        return answers, null_odds, built
    return postprocess.predictions_v1(examples, built, results)[0], None, built


def _model(version_2_with_negative):
    keras.utils.set_random_seed(7)
    model = AlbertQuestionAnswering(AlbertConfig.from_json_file(TINY_CONFIG),
                                    version_2_with_negative=version_2_with_negative)
    model(model.example_inputs())
    return model


def _served_and_expected(tmp_path, model, source, examples, max_seq_length, doc_stride):
    tokenizer = AlbertTokenizer(SPM_MODEL)
    cache_dir = str(tmp_path / "cache")
    threshold = None
    if model.version_2_with_negative:  # a threshold that makes some questions unanswerable
        _, null_odds, _ = _python_answers(model, source, examples, tokenizer, cache_dir, max_seq_length, doc_stride,
                                          None)
        threshold = sorted(null_odds.values())[len(null_odds) // 2]
    expected, null_odds, built = _python_answers(model, source, examples, tokenizer, cache_dir, max_seq_length,
                                                 doc_stride, threshold)
    export_path = export_squad(model, SPM_MODEL, str(tmp_path / "export"), max_seq_length=max_seq_length,
                               doc_stride=doc_stride, null_score_diff_threshold=threshold,
                               max_windows=len(built))  # every question's windows in one request
    served = serve_squad(export_path, [e.question_text for e in examples], [e.paragraph_text for e in examples])
    assert not served["albert_tf_loaded"]
    assert served["text"] == [expected[e.qas_id] for e in examples]
    if model.version_2_with_negative:
        assert "" in served["text"] and any(served["text"])
    for example, text, start, end in zip(examples, served["text"], served["start"], served["end"]):
        assert (example.paragraph_text[start:end] if text else "") == text and (start == -1) == (text == "")
    return served, built


@pytest.mark.slow
@pytest.mark.parametrize("version_2_with_negative", [False, True])
def test_served_answers_equal_the_python_answers(tmp_path, version_2_with_negative):
    model = _model(version_2_with_negative)
    source, examples = _single_window_examples(AlbertTokenizer(SPM_MODEL), 256)
    assert len(examples) >= 8
    served, _ = _served_and_expected(tmp_path, model, source, examples, 256, DOC_STRIDE)
    assert set(served["token_ids_outputs"]) == (
        {"start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index", "cls_logits"}
        if version_2_with_negative else {"start_logits", "end_logits"})
    empty_batch = {"answer_text": [0], "answer_start": [0], "answer_end": [0], "score": [0]}
    if version_2_with_negative:
        empty_batch["no_answer_score"] = [0]
    assert served["empty_batch"] == empty_batch


@pytest.mark.slow
@pytest.mark.parametrize("version_2_with_negative", [False, True])
def test_long_contexts_are_answered_over_all_windows_as_in_python(tmp_path, version_2_with_negative):
    model = _model(version_2_with_negative)
    source, examples = _long_context_examples(tmp_path)
    served, built = _served_and_expected(tmp_path, model, source, examples, 128, 32)
    windows = [f for f in built if f.example_index == 0]
    assert len(windows) >= 10
    first_window_end = windows[0].tok_end_to_orig_index[-1]
    # Most answers (v2.0: of the answered half) lie beyond the first window: the later windows and the
    # max-context rule decided them.
    answered = [start for start in served["start"] if start != -1]
    later = [start for start in answered if start > first_window_end]
    assert len(later) > len(answered) // 2 and len(later) >= 5


def _with_nul_examples(tmp_path, examples):
    """`examples`' questions on their paragraphs with a NUL before a word a third of the way in."""
    paragraphs = []
    for example in examples:
        words = example.paragraph_text.split(" ")
        third = len(words) // 3
        paragraphs.append({"context": " ".join(words[:third]) + " \x00" + " ".join(words[third:]),
                           "qas": [{"id": example.qas_id, "question": example.question_text, "answers": []}]})
    path = write_squad(tmp_path / "nul.json", paragraphs, version="v1.1")
    return path, read_squad_examples(path, is_training=False, version_2_with_negative=False)


@pytest.mark.slow
def test_a_context_holding_a_nul_is_answered_as_in_python(tmp_path):
    # Issue 60 item 8: the in-graph word split stopped at the NUL, so the model read the paragraph cut
    # there and answered from its first part. Users expect the answer run_squad.py gives (NUL is one
    # more unknown piece, as in training), not a refusal of text that SQuAD JSON can hold.
    model = _model(False)
    _, examples = _single_window_examples(AlbertTokenizer(SPM_MODEL), 256)
    source, nul_examples = _with_nul_examples(tmp_path, examples[:4])
    assert all("\x00" in example.paragraph_text for example in nul_examples)
    _served_and_expected(tmp_path, model, source, nul_examples, 256, DOC_STRIDE)
