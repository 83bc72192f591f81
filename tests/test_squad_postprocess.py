"""SQuAD post-processing: valid spans only, n-best by start + end score, text from the original paragraph."""

import numpy as np
import pytest

from albert_tf.squad import features, postprocess
from albert_tf.squad.examples import SquadExample
from albert_tf.text.tokenization import AlbertTokenizer
from squad_test_data import SPM_MODEL

PARAGRAPH = "Paris is the capital of France. Its mayor is Anne Hidalgo."


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL)


def _windows(tokenizer, max_seq_length=64, doc_stride=128):
    example = SquadExample("q1", "What is the capital?", PARAGRAPH)
    built = list(features.convert_examples_to_features([example], tokenizer, max_seq_length, doc_stride, 64,
                                                       is_training=False))
    return example, built


def _position(tokenizer, feature, piece):
    """Sequence position of `piece` in the paragraph part of `feature`."""
    pieces = tokenizer.convert_ids_to_tokens(feature.input_ids)
    return pieces.index(piece, feature.doc_offset)


def test_v1_best_span_respects_length_and_question(tokenizer):
    example, (feature,) = _windows(tokenizer)
    start, end = np.zeros(64), np.zeros(64)
    start[1] = end[1] = 100.0  # inside the question: never an answer
    paris, france = _position(tokenizer, feature, "\u2581paris"), _position(tokenizer, feature, "\u2581france")
    start[paris], end[france] = 10.0, 10.0  # longer than max_answer_length below
    start[france], end[france + 1] = 5.0, 4.0  # "France." scores 5 + 4, below "France" (5 + 10)
    results = {feature.unique_id: {"start_logits": start, "end_logits": end}}
    answers, nbest = postprocess.predictions_v1([example], [feature], results, n_best_size=20, max_answer_length=3)
    assert answers == {"q1": "France"}
    assert (nbest["q1"][0]["start_log_prob"], nbest["q1"][0]["end_log_prob"]) == (5.0, 10.0)
    assert {"text": "France.", "start_log_prob": 5.0, "end_log_prob": 4.0} in [
        {k: v for k, v in entry.items() if k != "probability"} for entry in nbest["q1"]]
    assert sum(entry["probability"] for entry in nbest["q1"]) == pytest.approx(1.0)
    assert len({entry["text"] for entry in nbest["q1"]}) == len(nbest["q1"])  # texts are distinct
    answers, _ = postprocess.predictions_v1([example], [feature], results, max_answer_length=30)
    assert answers == {"q1": PARAGRAPH[:PARAGRAPH.index("France") + len("France")]}


def test_v1_placeholder_when_no_span_is_valid(tokenizer):
    example, (feature,) = _windows(tokenizer)
    start, end = np.zeros(64), np.zeros(64)
    start[1] = end[1] = 100.0
    results = {feature.unique_id: {"start_logits": start, "end_logits": end}}
    answers, nbest = postprocess.predictions_v1([example], [feature], results, n_best_size=1)
    assert answers == {"q1": "empty"} and nbest["q1"][0]["probability"] == 1.0


def test_v2_pools_windows_and_applies_the_null_threshold(tokenizer):
    example, built = _windows(tokenizer, max_seq_length=16, doc_stride=2)
    assert len(built) > 2
    results = {}
    for number, feature in enumerate(built):
        start = feature.doc_offset + feature.token_is_max_context.index(1)
        results[feature.unique_id] = {
            "start_top_log_probs": np.array([-1.0 - number, -9.0]), "start_top_index": np.array([start, 0]),
            "end_top_log_probs": np.array([-1.0, -2.0, -3.0, -4.0]),
            "end_top_index": np.array([start + 1, start, start, start]),
            "cls_logits": 3.0 - number,
        }
    answers, nbest, null_odds = postprocess.predictions_v2([example], built, results)
    # The first window's span (its first max-context piece and the next) scores best (-1 + -1).
    first = built[0]
    piece = first.token_is_max_context.index(1)
    begin, finish = first.tok_start_to_orig_index[piece], first.tok_end_to_orig_index[piece + 1]
    assert answers["q1"] == PARAGRAPH[begin:finish + 1].strip() == nbest["q1"][0]["text"]
    assert nbest["q1"][0]["start_log_prob"] == -1.0 and nbest["q1"][0]["end_log_prob"] == -1.0
    # Start index 0 ([CLS]) is never a span; the no-answer score is the lowest over windows.
    assert null_odds == {"q1": 3.0 - (len(built) - 1)}
    threshold = null_odds["q1"]
    assert postprocess.predictions_v2([example], built, results, null_score_diff_threshold=threshold)[0] == {"q1": ""}
    assert postprocess.predictions_v2([example], built, results,
                                      null_score_diff_threshold=threshold + 0.5)[0] == answers
