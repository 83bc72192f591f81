"""SavedModel exports: raw-text serving in a process that has only tensorflow and tensorflow_text."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from albert_tf import AlbertClassifier, AlbertConfig
from albert_tf.glue.examples import GlueExample
from albert_tf.glue.features import example_ids
from albert_tf.glue.tasks import get_task
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.serving.classifier_export import ClassifierServingModule, export_classifier
from albert_tf.serving.encoder_export import EncoderModule, export_encoder
from albert_tf.serving.export_module import TOKEN_IDS_SIGNATURE
from albert_tf.text.tokenization import AlbertTokenizer
from glue_test_data import SPM_MODEL, TINY_CONFIG
from model_test_data import xla_compiled_functions

FIRST = ["Hello, World!", "", "in 1990, the Café Müller", "word " * 3000, "😀 中文字 e\u0301 ΣΑΣ \x00 \u200b"]
SECOND = ["this is a test", "", "", "x 10, 20, 30", "한국어 ﬁ"]
SEQ_LENGTH = 32

RELOAD_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text  # registers the SentencePiece ops the graph uses
    classifier_dir, encoder_dir, preprocessing_dir, out = sys.argv[1:]
    first, second = json.loads(open(out + ".text").read())
    result = {}
    def as_list(value):
        value = value.numpy()
        return [item.decode("utf-8") for item in value] if value.dtype == object else value.tolist()
    classifier = tf.saved_model.load(classifier_dir)
    text = classifier.signatures["serving_default"](sentence1=tf.constant(first), sentence2=tf.constant(second))
    result["text"] = {k: as_list(v) for k, v in text.items()}
    ids = json.loads(open(out + ".ids").read())
    token = classifier.signatures["serve_token_ids"](**{k: tf.constant(v, tf.int32) for k, v in ids.items()})
    result["ids"] = {k: as_list(v) for k, v in token.items()}
    preprocessing = tf.saved_model.load(preprocessing_dir)
    packed = preprocessing.bert_pack_inputs(
        [preprocessing.tokenize(tf.constant(first)), preprocessing.tokenize(tf.constant(second))], seq_length=64)
    encoder = tf.saved_model.load(encoder_dir)
    encoded = encoder(packed)
    result["packed"] = {k: v.numpy().tolist() for k, v in packed.items()}
    result["pooled"] = encoded["pooled_output"].numpy().tolist()
    result["num_encoder_outputs"] = len(encoded["encoder_outputs"])
    result["default_shape"] = preprocessing(tf.constant(first))["input_word_ids"].shape.as_list()
    assert "albert_tf" not in sys.modules
    open(out, "w").write(json.dumps(result, ensure_ascii=False))
    """
)


def saved_graph_def(saved_model_dir):
    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(saved_model_dir, "saved_model.pb"), "rb") as handle:
        saved.ParseFromString(handle.read())
    return saved.meta_graphs[0].graph_def


def python_packed(tokenizer, first, second, seq_length):
    """The Python (training-time) features, padded to the batch's longest row."""
    rows = [example_ids(GlueExample("x", a, b, None), tokenizer, seq_length) for a, b in zip(first, second)]
    length = max(len(ids) for ids, _ in rows)
    pad = lambda values: values + [0] * (length - len(values))  # noqa: E731
    return {
        "input_word_ids": np.array([pad(ids) for ids, _ in rows], np.int32),
        "input_mask": np.array([pad([1] * len(ids)) for ids, _ in rows], np.int32),
        "input_type_ids": np.array([pad(types) for _, types in rows], np.int32),
    }


@pytest.mark.slow
def test_exports_serve_raw_text_in_a_fresh_process(tmp_path):
    task = get_task("mrpc")
    config = AlbertConfig.from_json_file(TINY_CONFIG)
    classifier = AlbertClassifier(config, task.num_labels)
    classifier_dir = export_classifier(classifier, task, SPM_MODEL, str(tmp_path / "classifier"),
                                       max_seq_length=SEQ_LENGTH, version=7)
    assert classifier_dir.endswith(os.path.join("classifier", "7"))
    assert os.path.exists(os.path.join(classifier_dir, "assets", "30k-clean.model"))
    encoder_dir, preprocessing_dir = export_encoder(classifier.albert, SPM_MODEL, str(tmp_path / "hub"), version=1)
    for saved in (classifier_dir, encoder_dir):  # TF Serving runs XLA functions only when told to
        assert xla_compiled_functions(saved_graph_def(saved)) == [], saved

    tokenizer = AlbertTokenizer(SPM_MODEL)
    inputs = python_packed(tokenizer, FIRST, SECOND, SEQ_LENGTH)
    expected_logits = classifier(inputs)["logits"].numpy()
    out = str(tmp_path / "result.json")
    with open(out + ".ids", "w") as handle:
        json.dump({k: v.tolist() for k, v in inputs.items()}, handle)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH="")
    with open(out + ".text", "w") as handle:
        json.dump([FIRST, SECOND], handle)
    subprocess.run([sys.executable, "-c", RELOAD_SCRIPT, classifier_dir, encoder_dir, preprocessing_dir, out],
                   check=True, env=env, cwd=str(tmp_path))
    with open(out, encoding="utf-8") as handle:
        result = json.load(handle)

    for served in (result["text"], result["ids"]):
        np.testing.assert_allclose(served["logits"], expected_logits, atol=1e-5)
        probabilities = np.exp(expected_logits) / np.exp(expected_logits).sum(-1, keepdims=True)
        np.testing.assert_allclose(served["probabilities"], probabilities, atol=1e-5)
        assert served["label"] == [task.label_names[i] for i in expected_logits.argmax(-1)]  # MRPC's own names

    expected_packed = python_packed(tokenizer, FIRST, SECOND, 64)
    for name, value in expected_packed.items():
        np.testing.assert_array_equal(np.array(result["packed"][name])[:, : value.shape[1]], value)
    np.testing.assert_allclose(result["pooled"], classifier.albert(
        {k: np.array(v, np.int32) for k, v in result["packed"].items()})["pooled_output"].numpy(), atol=1e-5)
    assert result["num_encoder_outputs"] == config.num_hidden_layers
    assert result["default_shape"] == [len(FIRST), 128]

    listing = subprocess.run(["saved_model_cli", "show", "--all", "--dir", classifier_dir], check=True,
                             capture_output=True, text=True, env=env).stdout
    for needle in ("signature_def['serving_default']", f"signature_def['{TOKEN_IDS_SIGNATURE}']",
                   "inputs['sentence1']", "inputs['sentence2']", "outputs['probabilities']",
                   "outputs['label']", "outputs['logits']", "inputs['input_word_ids']"):
        assert needle in listing


def test_serving_graphs_trace_the_reference_kernels_of_a_cpu_kernels_model():
    task = get_task("mrpc")
    classifier = AlbertClassifier(AlbertConfig.from_json_file(TINY_CONFIG), task.num_labels, kernels="cpu")
    module = ClassifierServingModule(classifier, task.text_feature_names, task.labels, SPM_MODEL)
    static = {name: tf.TensorSpec([2, 8], tf.int32) for name in INPUT_NAMES}
    direct = tf.function(lambda inputs: classifier(inputs, training=False)["logits"])
    served = tf.function(module._serve_token_ids)
    encoded = tf.function(EncoderModule(classifier.albert)._serve_token_ids)
    assert xla_compiled_functions(direct.get_concrete_function(static).graph.as_graph_def())
    for export in (served, encoded):
        assert xla_compiled_functions(export.get_concrete_function(static).graph.as_graph_def()) == []
    inputs = {name: tf.constant(np.random.default_rng(0).integers(5, 100, (2, 8)), tf.int32) for name in INPUT_NAMES}
    inputs["input_mask"], inputs["input_type_ids"] = tf.ones_like(inputs["input_mask"]), tf.zeros_like(inputs["input_type_ids"])
    np.testing.assert_allclose(served(inputs)["logits"], direct(inputs), atol=1e-5)
