"""Every export checks a request before working on it. Token ids: each input has the
shape of `input_word_ids` (a mask of another shape was broadcast or ignored), ids are in the
model's vocabularies. Raw text: rows, bytes per
string and (SQuAD) windows are bounded at export time, so one request cannot exhaust the server."""

import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertClassifier
from albert_tf.config import AlbertConfig
from albert_tf.glue.tasks import get_task
from albert_tf.models.multiple_choice_model import AlbertMultipleChoice
from albert_tf.models.question_answering_model import AlbertQuestionAnswering
from albert_tf.serving.classifier_export import ClassifierServingModule
from albert_tf.serving.encoder_export import EncoderModule, PreprocessingModule
from albert_tf.serving.race_export import RaceServingModule
from albert_tf.serving.squad_export import SquadServingModule, export_squad
from squad_test_data import SPM_MODEL, TINY_CONFIG

INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def _config():
    return AlbertConfig.from_json_file(TINY_CONFIG)


def _ids(shape, seed=0):
    return tf.constant(np.random.default_rng(seed).integers(5, 1000, shape), tf.int32)


def _token_inputs(shape, names=INPUTS):
    inputs = {name: tf.ones(shape, tf.int32) for name in names}
    inputs["input_word_ids"] = _ids(shape)
    inputs["input_type_ids"] = tf.zeros(shape, tf.int32)
    return inputs


@pytest.fixture(scope="module")
def classifier():
    keras.utils.set_random_seed(1)
    return AlbertClassifier(_config(), 2)


def _classifier_module(classifier, **bounds):
    task = get_task("mrpc")
    return ClassifierServingModule(classifier, task.text_feature_names, task.labels, SPM_MODEL, max_seq_length=32,
                                   **bounds)


def _squad_module(**bounds):
    keras.utils.set_random_seed(2)
    model = AlbertQuestionAnswering(_config())
    model(model.example_inputs(), training=False)
    return SquadServingModule(model, SPM_MODEL, max_seq_length=48, doc_stride=16, max_query_length=16, **bounds)


def _race_module(**bounds):
    keras.utils.set_random_seed(3)
    model = AlbertMultipleChoice(_config())
    model(model.example_inputs(), training=False)
    return RaceServingModule(model, SPM_MODEL, max_seq_length=32, max_qa_length=8, **bounds), model


def _mismatched_masks(shape):
    """Masks that were accepted against ids of `shape` ([1,16], [1,1], [1,64], [3,32] against [1,32]: broadcast or ignored by an unchecked export)."""
    rows, length = shape[0], shape[-1]
    middle = list(shape[1:-1])
    return [[rows, *middle, length // 2], [rows, *middle, 1], [rows, *middle, 2 * length], [3 * rows, *middle, length]]


def _assert_refused(call, *words):
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        call()
    failed = [line for line in error.value.message.splitlines() if "assertion failed: [" in line]
    assert failed, error.value.message
    for word in words:
        assert word in failed[0], error.value.message


@pytest.mark.parametrize("name", ["input_mask", "input_type_ids"])
def test_classifier_token_ids_of_another_shape_are_refused(classifier, name):
    module = _classifier_module(classifier)
    inputs = _token_inputs([1, 32])
    np.testing.assert_allclose(module.serve_token_ids(inputs)["logits"],
                               classifier(inputs, training=False)["logits"], atol=1e-5)
    for shape in _mismatched_masks([1, 32]):
        _assert_refused(lambda: module.serve_token_ids({**inputs, name: tf.ones(shape, tf.int32)}),
                        name, "input_word_ids")


def test_encoder_token_ids_of_another_shape_are_refused(classifier):
    module = EncoderModule(classifier.albert)
    inputs = _token_inputs([2, 16])
    np.testing.assert_allclose(module.serve(inputs)["pooled_output"],
                               classifier.albert(inputs, training=False)["pooled_output"], atol=1e-5)
    for shape in _mismatched_masks([2, 16]):
        for call in (module.serve, module.__call__, module.serve_encoder_outputs):
            _assert_refused(lambda: call({**inputs, "input_mask": tf.ones(shape, tf.int32)}),
                            "input_mask", "input_word_ids")


def test_squad_token_ids_of_another_shape_are_refused():
    module = _squad_module()
    inputs = _token_inputs([2, 48], INPUTS + ("p_mask",))
    inputs["p_mask"] = tf.zeros([2, 48], tf.int32)
    np.testing.assert_allclose(module.serve_token_ids(inputs)["start_logits"],
                               module.model(inputs, training=False)["start_logits"], atol=1e-5)
    for name in ("input_mask", "p_mask"):
        for shape in _mismatched_masks([2, 48]):
            _assert_refused(lambda: module.serve_token_ids({**inputs, name: tf.ones(shape, tf.int32)}),
                            name, "input_word_ids")


def test_race_token_ids_of_another_shape_are_refused():
    module, model = _race_module()
    inputs = _token_inputs([2, 4, 16])
    np.testing.assert_allclose(module.serve_token_ids(inputs)["logits"], model(inputs, training=False), atol=1e-5)
    for shape in _mismatched_masks([2, 4, 16]):
        _assert_refused(lambda: module.serve_token_ids({**inputs, "input_mask": tf.ones(shape, tf.int32)}),
                        "input_mask", "input_word_ids")


def _with_mask_row(inputs, row):
    mask = inputs["input_mask"].numpy().copy()
    mask[(0,) * (mask.ndim - 1)] = row
    return {**inputs, "input_mask": tf.constant(mask)}


def _token_ids_call(classifier, module_kind):
    """(The token-id function of an export of `module_kind`, inputs it serves)."""
    if module_kind == "classifier":
        return _classifier_module(classifier).serve_token_ids, _token_inputs([2, 32])
    if module_kind == "encoder":
        return EncoderModule(classifier.albert).serve, _token_inputs([2, 16])
    if module_kind == "squad":
        return _squad_module().serve_token_ids, _token_inputs([2, 48], INPUTS + ("p_mask",))
    return _race_module()[0].serve_token_ids, _token_inputs([2, 4, 16])


@pytest.mark.parametrize("module_kind", ["classifier", "encoder", "squad", "race"])
def test_token_ids_with_a_mask_of_other_values_or_a_row_of_no_tokens_are_refused(classifier, module_kind):
    call, inputs = _token_ids_call(classifier, module_kind)
    call(inputs)  # 1s, and 1s then 0s, are served
    call(_with_mask_row(inputs, [1] * 5 + [0] * (inputs["input_mask"].shape[-1] - 5)))
    _assert_refused(lambda: call(_with_mask_row(inputs, 2)), "input_mask must hold only 0 (padding) and 1")
    _assert_refused(lambda: call(_with_mask_row(inputs, 0)), "input_mask: every row needs a 1")


@pytest.mark.parametrize("module_kind", ["classifier", "encoder", "squad", "race"])
def test_token_ids_outside_the_vocabularies_are_refused(classifier, module_kind):
    # Issue 60 item 20: on a GPU TensorFlow's lookup gives zeros for an id past the table, and the
    # request would be answered about nothing; every export refuses it, on any device.
    call, inputs = _token_ids_call(classifier, module_kind)
    config = _config()
    for name, value, size_name in [("input_word_ids", config.vocab_size, "vocab_size"),
                                   ("input_word_ids", -1, "vocab_size"),
                                   ("input_type_ids", config.type_vocab_size, "type_vocab_size")]:
        ids = inputs[name].numpy().copy()
        ids[(-1,) * ids.ndim] = value
        _assert_refused(lambda: call({**inputs, name: tf.constant(ids)}), name, f"{size_name} {getattr(config, size_name)}")
    call({**inputs, "input_word_ids": tf.fill(inputs["input_word_ids"].shape, config.vocab_size - 1)})  # the last id


def test_classifier_text_past_the_export_bounds_is_refused(classifier):
    module = _classifier_module(classifier, max_batch_size=3, max_string_bytes=40)
    served = module.serve_text(tf.constant(["a" * 40] * 3), tf.constant(["b"] * 3))  # at the bounds
    assert served["logits"].shape == [3, 2]
    _assert_refused(lambda: module.serve_text(tf.constant(["a"] * 4), tf.constant(["b"] * 4)),
                    "sentence1", "at most 3 rows", "max_batch_size")
    _assert_refused(lambda: module.serve_text(tf.constant(["a"]), tf.constant(["b" * 41])),
                    "sentence2", "at most 40 bytes", "max_string_bytes")
    _assert_refused(lambda: module.serve_text(tf.constant(["a", "b"]), tf.constant(["c"])),
                    "sentence2", "as many rows as sentence1")
    _assert_refused(lambda: module.serve_token_ids(_token_inputs([4, 8])), "input_word_ids", "at most 3 rows")


def test_encoder_preprocessing_past_the_export_bounds_is_refused():
    module = PreprocessingModule(SPM_MODEL, seq_length=32, max_batch_size=2, max_string_bytes=10)
    assert module.__call__(tf.constant(["0123456789", "x"]))["input_word_ids"].shape == [2, 32]
    for call in (module.__call__, module.tokenize):
        _assert_refused(lambda: call(tf.constant(["x"] * 3)), "strings", "at most 2 rows")
        _assert_refused(lambda: call(tf.constant(["x" * 11])), "strings", "at most 10 bytes")


def test_race_text_past_the_export_bounds_is_refused():
    module, _ = _race_module(max_batch_size=2, max_string_bytes=20)
    options = tf.constant([["a", "b", "c", "d"]] * 2)
    assert module.serve_text(tf.constant(["x" * 20] * 2), tf.constant(["q"] * 2), options)["choice"].shape == [2]
    _assert_refused(lambda: module.serve_text(tf.constant(["x"] * 3), tf.constant(["q"] * 3),
                                              tf.constant([["a", "b", "c", "d"]] * 3)), "article", "at most 2 rows")
    _assert_refused(lambda: module.serve_text(tf.constant(["x"]), tf.constant(["q"]),
                                              tf.constant([["a", "b", "c", "d" * 21]])), "options", "at most 20 bytes")
    _assert_refused(lambda: module.serve_text(tf.constant(["x"]), tf.constant(["q", "r"]), options),
                    "question", "as many rows as article")


@pytest.mark.slow
def test_a_squad_request_past_the_export_bounds_fails_quickly_after_saving(tmp_path):
    module = _squad_module()
    path = export_squad(module.model, SPM_MODEL, str(tmp_path / "export"), max_seq_length=48, doc_stride=16,
                        max_query_length=16, max_batch_size=2, max_windows=6, max_string_bytes=2000, version=1)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    context = " ".join(["word"] * 60)  # 60 pieces, windows of 48 - 3 - 3 = 42 pieces 16 apart: 3 windows
    assert serve(question=tf.constant(["a b"] * 2), context=tf.constant([context] * 2))["answer_text"].shape == [2]
    _assert_refused(lambda: serve(question=tf.constant(["a b"] * 3), context=tf.constant([context] * 3)),
                    "question", "at most 2 rows", "max_batch_size")
    longer = " ".join(["word"] * 100)  # 5 windows after a 1-piece question
    _assert_refused(lambda: serve(question=tf.constant(["a b", "c"]), context=tf.constant([context, longer])),
                    "context", "at most 6 windows", "max_windows")
    started = time.monotonic()
    _assert_refused(lambda: serve(question=tf.constant(["a"]), context=tf.constant(["word " * 401])),
                    "context", "at most 2000 bytes", "max_string_bytes")
    assert time.monotonic() - started < 5
    ids = tf.saved_model.load(path).signatures["serve_token_ids"]
    _assert_refused(lambda: ids(**_token_inputs([7, 48], INPUTS + ("p_mask",))), "at most 6 rows", "max_windows")
    _assert_refused(lambda: ids(**{**_token_inputs([1, 48], INPUTS + ("p_mask",)),
                                   "input_mask": tf.ones([1, 16], tf.int32)}), "input_mask", "input_word_ids")


@pytest.mark.parametrize("bounds", [{"max_batch_size": 0}, {"max_string_bytes": 1.5}, {"max_batch_size": True}])
def test_an_export_refuses_a_bound_that_is_not_a_positive_int(classifier, bounds):
    with pytest.raises(ValueError, match=f"{next(iter(bounds))} must be a positive int"):
        _classifier_module(classifier, **bounds)
