"""The "cpu_serving" kernel set and the export kernels: plain TF ops, the same graph on every
machine, recorded in the export, the reference model's predictions in a fresh process."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertClassifier, AlbertModel, kernels
from albert_tf.models import rebuilt
from albert_tf.glue.tasks import get_task
from albert_tf.kernels import cpu_inference
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.serving.classifier_export import ClassifierServingModule, export_classifier
from albert_tf.serving.encoder_export import EncoderModule, export_encoder
from glue_test_data import SPM_MODEL
from model_test_data import backbone_inputs, batch_for, executed_op_types, tiny, xla_compiled_functions


def traced_graph(model, shapes):
    spec = {name: tf.TensorSpec(shapes, tf.int32) for name in INPUT_NAMES}
    return tf.function(lambda inputs: model(inputs, training=False)["sequence_output"]).get_concrete_function(
        spec).graph.as_graph_def()


def op_types(graph_def):
    return sorted([node.op for node in graph_def.node]
                  + [node.op for function in graph_def.library.function for node in function.node_def])


@pytest.mark.parametrize("shapes", [[2, 12], [None, None]])
def test_cpu_serving_traces_plain_ops_whatever_the_tracing_machine_runs(shapes, monkeypatch):
    model = AlbertModel(tiny(), kernels="cpu_serving")
    graphs = {}
    for has_onednn in (True, False):
        monkeypatch.setattr(cpu_inference, "onednn_runs", lambda dtype, answer=has_onednn: answer)
        graphs[has_onednn] = traced_graph(model, shapes)
        assert xla_compiled_functions(graphs[has_onednn]) == []
    assert op_types(graphs[True]) == op_types(graphs[False])
    # cpu_inference, by contrast, changes with the machine (and holds an XLA kernel at static shapes).
    inference = rebuilt(model, kernels="cpu_inference")
    assert op_types(traced_graph(inference, shapes)) != op_types(graphs[True])


def test_cpu_serving_runs_fused_matmuls_and_one_layer_norm_per_sub_layer():
    config = tiny()
    model = AlbertModel(config, kernels="cpu_serving")
    inputs = {k: tf.constant(v) for k, v in backbone_inputs(batch_for(config)).items()}
    ran = executed_op_types(tf.function(lambda batch: model(batch)["sequence_output"]), inputs)
    layers = config.num_hidden_layers
    assert ran["Rsqrt"] == 1 + 2 * layers  # LayerNorm: the embeddings', then twice per layer
    if cpu_inference.onednn_runs(tf.float32):  # oneDNN's rewrites fuse the forms
        assert ran["_MklFusedBatchMatMulV2"] == layers and ran["_MklSoftmax"] == layers
        assert ran["_MklNativeFusedMatMul"] == 3 * layers
        assert not {"Tanh", "Softmax"} & set(ran), ran
    else:  # TF's own remapper still fuses the bias into the 2-D matmuls
        assert ran["_FusedMatMul"] == 3 * layers and ran["Softmax"] == layers, ran


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_cpu_serving_computes_the_reference_values(policy):
    config = tiny()
    model = AlbertModel(config, dtype=None if policy == "float32" else policy)
    serving = rebuilt(model, kernels="cpu_serving")
    inputs = {k: tf.constant(v) for k, v in backbone_inputs(batch_for(config)).items()}
    spec = [{k: tf.TensorSpec([None, None], tf.int32) for k in inputs}]
    got, want = (tf.function(lambda batch, m=m: m(batch, training=False), input_signature=spec)(inputs)
                 for m in (serving, model))
    for key in ("sequence_output", "pooled_output"):
        difference = np.abs(np.asarray(got[key]) - np.asarray(want[key]))
        if policy == "float32":
            assert difference.max() < 1e-5, key
        else:  # bfloat16 roundings at other points (the Q/K/V and weight casts), softmax in float32
            assert difference.max() < 0.02 and difference.mean() < 2e-3, key


def test_export_kernels_are_checked_and_recorded():
    task = get_task("sst-2")
    classifier = AlbertClassifier(tiny(), task.num_labels, kernels="cpu")
    for bad in ("cpu", "cpu_inference", "fast"):
        with pytest.raises(ValueError, match=r"export kernels must be one of \['reference', 'cpu_serving'\]"):
            ClassifierServingModule(classifier, task.text_feature_names, task.labels, SPM_MODEL, kernels=bad)
    module = EncoderModule(classifier.albert, kernels="cpu_serving")
    assert module.model.kernels == "cpu_serving" and module.export_kernels.numpy() == b"cpu_serving"
    assert EncoderModule(classifier.albert).export_kernels.numpy() == b"reference"


RELOAD_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text  # registers the SentencePiece ops the graph uses
    classifier_dir, encoder_dir, out = sys.argv[1:]
    request = json.loads(open(out + ".in").read())
    classifier = tf.saved_model.load(classifier_dir)
    encoder = tf.saved_model.load(encoder_dir)
    ids = {k: tf.constant(v, tf.int32) for k, v in request["ids"].items()}
    result = {
        "kernels": [classifier.export_kernels.numpy().decode(), encoder.export_kernels.numpy().decode()],
        "text_logits": classifier.signatures["serving_default"](
            sentence=tf.constant(request["text"]))["logits"].numpy().tolist(),
        "ids_logits": classifier.signatures["serve_token_ids"](**ids)["logits"].numpy().tolist(),
        "encoder": {k: v.numpy().tolist() for k, v in encoder.signatures["serving_default"](**ids).items()},
        "every_layer": sorted(encoder.signatures["serve_encoder_outputs"](**ids)),
        "weight_forms": len(classifier.serving_weight_forms.forms),
    }
    assert "albert_tf" not in sys.modules
    open(out, "w").write(json.dumps(result))
    """
)


@pytest.mark.slow
def test_cpu_serving_exports_serve_the_reference_predictions_in_a_fresh_process(tmp_path):
    task = get_task("sst-2")
    config = tiny()
    classifier = AlbertClassifier(config, task.num_labels)  # the reference kernels: the expected values
    classifier_dir = export_classifier(classifier, task, SPM_MODEL, str(tmp_path / "classifier"),
                                       max_seq_length=32, version=1, kernels="cpu_serving")
    encoder_dir, _ = export_encoder(classifier.albert, SPM_MODEL, str(tmp_path / "hub"), version=1,
                                    kernels="cpu_serving")
    ids = backbone_inputs(batch_for(config))
    text = ["a charming and often affecting journey .", "unflinchingly bleak"]
    out = str(tmp_path / "result.json")
    with open(out + ".in", "w") as handle:
        json.dump({"ids": {k: v.tolist() for k, v in ids.items()}, "text": text}, handle)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH="")
    subprocess.run([sys.executable, "-c", RELOAD_SCRIPT, classifier_dir, encoder_dir, out],
                   check=True, env=env, cwd=str(tmp_path))
    with open(out) as handle:
        result = json.load(handle)

    assert result["kernels"] == ["cpu_serving", "cpu_serving"]
    # Saved with the export: per-head kernel and bias of Q/K/V, and of Q and K/V apart for the rows
    # of the last block that the pooler reads.
    assert result["weight_forms"] == 6
    np.testing.assert_allclose(result["ids_logits"], classifier(ids)["logits"], atol=1e-5)
    text_ids = ClassifierServingModule(classifier, task.text_feature_names, task.labels, SPM_MODEL)
    packed = text_ids.preprocessor(tf.constant(text))
    np.testing.assert_allclose(result["text_logits"], classifier(packed)["logits"], atol=1e-5)
    expected = classifier.albert(ids)
    assert sorted(result["encoder"]) == ["default", "pooled_output", "sequence_output"]
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(result["encoder"][key], expected[key], atol=1e-5, err_msg=key)
    assert result["every_layer"] == sorted(["default", "pooled_output", "sequence_output"]
                                           + [f"encoder_outputs_{i}" for i in range(config.num_hidden_layers)])


def test_cpu_serving_reads_the_shared_weights_once_per_pass():
    def reads(num_layers):
        config = tiny(num_hidden_layers=num_layers)
        model = AlbertModel(config, kernels="cpu_serving")
        inputs = {k: tf.constant(v) for k, v in backbone_inputs(batch_for(config)).items()}
        return executed_op_types(tf.function(lambda batch: model(batch)["sequence_output"]), inputs)["ReadVariableOp"]

    # A layer more reads no weight: the shared block's, its LayerNorms' included, are read once.
    assert reads(4) == reads(2)


@pytest.mark.parametrize("policy, forms_per_block", [("float32", 2), ("mixed_bfloat16", 8)])
def test_cpu_serving_makes_the_weight_forms_once_as_variables(policy, forms_per_block):
    # Per block, float32: the per-head Q/K/V kernel and bias; bfloat16 also the casts of the other
    # four Dense weights. And once, the per-head Q and K/V apart (the last block's pooled rows).
    config = tiny(num_hidden_layers=3, sharing="none")
    model = AlbertModel(config, dtype=None if policy == "float32" else policy, kernels="cpu_serving")
    inputs = {k: tf.constant(v) for k, v in backbone_inputs(batch_for(config)).items()}
    forms = model.encoder.kernels.weight_forms.module.forms
    first = tf.function(lambda batch: model(batch, training=False)["sequence_output"])(inputs)
    made = list(forms)
    again = tf.function(lambda batch: model(batch, training=False)["sequence_output"])(inputs)  # a new trace
    assert len(made) == forms_per_block * config.num_hidden_layers + 4
    assert [id(form) for form in forms] == [id(form) for form in made]  # reused, not made again
    assert not any(form.trainable for form in forms)
    np.testing.assert_array_equal(first, again)
    assert {form.dtype.name for form in made} == {"float32" if policy == "float32" else "bfloat16"}


def test_exports_trace_float32_unless_asked_for_another_dtype():
    task = get_task("sst-2")
    mixed = AlbertClassifier(tiny(), task.num_labels, dtype="mixed_bfloat16", kernels="cpu")
    portable = ClassifierServingModule(mixed, task.text_feature_names, task.labels, SPM_MODEL, max_seq_length=32)
    assert portable.model.dtype_policy_name == "float32" and portable.model.kernels == "reference"
    kept = ClassifierServingModule(mixed, task.text_feature_names, task.labels, SPM_MODEL, max_seq_length=32,
                                   kernels="cpu_serving", dtype="mixed_bfloat16")
    assert kept.model.dtype_policy_name == "mixed_bfloat16" and kept.model.kernels == "cpu_serving"
    for ours, theirs in zip(mixed.weights, portable.model.weights):
        np.testing.assert_array_equal(ours, theirs)
