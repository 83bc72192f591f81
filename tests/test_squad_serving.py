"""The SQuAD SavedModel answers raw text in a fresh process (TensorFlow and tensorflow-text only), as the
Python post-processing answers the same window."""

import keras
import pytest

from albert_tf.config import AlbertConfig
from albert_tf.models.question_answering_model import AlbertQuestionAnswering
from albert_tf.serving.squad_export import export_squad
from albert_tf.squad import features, postprocess
from albert_tf.squad.examples import read_squad_examples
from albert_tf.squad.prediction import raw_results
from albert_tf.tokenization import AlbertTokenizer
from squad_test_data import SPM_MODEL, SQUAD_DEV, TINY_CONFIG, serve_squad

MAX_SEQ_LENGTH = 256

def _single_window_examples(tokenizer):
    """Dev questions whose paragraph fits one window and is ASCII (where piece offsets are exact)."""
    examples = read_squad_examples(SQUAD_DEV, is_training=False, version_2_with_negative=True)
    built = list(features.convert_examples_to_features(examples, tokenizer, MAX_SEQ_LENGTH, 128, 64, False))
    counts = {}
    for feature in built:
        counts[feature.example_index] = counts.get(feature.example_index, 0) + 1
    chosen = [e for i, e in enumerate(examples) if counts.get(i) == 1 and e.paragraph_text.isascii()]
    return chosen[:12]


def _python_answers(model, examples, tokenizer, tmp_path, threshold):
    path, _ = features.cached_features(SQUAD_DEV, examples, tokenizer, str(tmp_path / "cache"), MAX_SEQ_LENGTH, 128, 64,
                                       False, True)
    built = features.read_features(path)
    results = raw_results(model, features.make_dataset(path, 8, MAX_SEQ_LENGTH), built)
    if model.version_2_with_negative:
        return postprocess.predictions_v2(examples, built, results, 20, 30, threshold)[0:3:2]
    return postprocess.predictions_v1(examples, built, results, n_best_size=MAX_SEQ_LENGTH)[0], None


@pytest.mark.slow
@pytest.mark.parametrize("version_2_with_negative", [False, True])
def test_served_answers_equal_the_python_answers(tmp_path, version_2_with_negative):
    tokenizer = AlbertTokenizer(SPM_MODEL)
    examples = _single_window_examples(tokenizer)
    assert len(examples) >= 8
    keras.utils.set_random_seed(7)
    model = AlbertQuestionAnswering(AlbertConfig.from_json_file(TINY_CONFIG),
                                    version_2_with_negative=version_2_with_negative)
    model(model.example_inputs())
    threshold = None
    if version_2_with_negative:  # a threshold that makes some questions unanswerable
        _, null_odds = _python_answers(model, examples, tokenizer, tmp_path, None)
        threshold = sorted(null_odds.values())[len(null_odds) // 2]
    expected, _ = _python_answers(model, examples, tokenizer, tmp_path, threshold)
    export_path = export_squad(model, SPM_MODEL, str(tmp_path / "export"), max_seq_length=MAX_SEQ_LENGTH,
                               null_score_diff_threshold=threshold)
    served = serve_squad(export_path, [e.question_text for e in examples], [e.paragraph_text for e in examples])
    assert not served["albert_tf_loaded"]
    assert served["text"] == [expected[e.qas_id] for e in examples]
    if version_2_with_negative:
        assert "" in served["text"] and any(served["text"])
    for example, text, start, end in zip(examples, served["text"], served["start"], served["end"]):
        assert (example.paragraph_text[start:end] if text else "") == text and (start == -1) == (text == "")
    assert set(served["token_ids_outputs"]) == (
        {"start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index", "cls_logits"}
        if version_2_with_negative else {"start_logits", "end_logits"})
