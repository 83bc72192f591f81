"""Inference on oneDNN CPUs: where its forms apply, that they compute what the other forms
compute, and that TF's rewrites really fuse them (the kernels that ran, from TF's profiler)."""

import contextlib
import platform
import re

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertModel, AlbertPretrainingModel
from albert_tf.layers import FeedForwardSubLayer, fused_elementwise
from albert_tf.layers.activations import gelu, gelu_for_inference
from albert_tf.layers.attention import attention_bias, attention_probabilities
from albert_tf.layers.fused_elementwise import plain_tf_ops
from model_test_data import backbone_inputs, batch_for, executed_op_types, tiny, xla_compiled_functions

# TF's x86 Linux wheels carry oneDNN (and albert_tf turns it on, see test_tf_defaults.py); whether
# it runs bfloat16 depends on the CPU (AVX-512), so the bfloat16 tests check either branch.
BF16_ON_ONEDNN = fused_elementwise._onednn_runs(tf.bfloat16)
pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="oneDNN ships in x86 builds")


def traced(function, *inputs, jit_compile=False):
    return tf.function(function, jit_compile=jit_compile)(*inputs)


def xla_kernels(function, *inputs):
    """The XLA kernels in the trace of `function` (their names: __inference_<name>_<id>)."""
    graph_def = function.get_concrete_function(*inputs).graph.as_graph_def()
    return {re.fullmatch(r"__inference_(.+)_\d+", name).group(1) for name in xla_compiled_functions(graph_def)}


def test_applies_only_in_traced_cpu_graphs_outside_xla_unless_switched_off(monkeypatch):
    monkeypatch.delenv(fused_elementwise.ENV_VAR, raising=False)

    def probe(dtype=tf.float32):
        return tf.constant(fused_elementwise.onednn_inference(dtype))

    assert traced(probe)
    assert traced(lambda: probe(tf.bfloat16)) == BF16_ON_ONEDNN
    assert not traced(lambda: probe(tf.float16))  # the XLA kernels compute float16 in float32
    assert not fused_elementwise.onednn_inference(tf.float32)  # eager
    assert not traced(probe, jit_compile=True)  # XLA compiles the whole function: no oneDNN rewrites
    with plain_tf_ops():
        assert not traced(probe)
    monkeypatch.setenv(fused_elementwise.ENV_VAR, "0")
    assert not traced(probe)


def test_onednn_softmax_of_bfloat16_is_the_float32_softmax_rounded_once():
    # What lets the inference form take the softmax in bfloat16: oneDNN computes it in float32.
    # Where oneDNN does not run bfloat16 (TF's Eigen softmax rounds each step), the form is not used.
    scores = tf.cast(tf.random.stateless_normal((64, 128), seed=(1, 2), stddev=4.0), tf.bfloat16)
    used = traced(lambda s: tf.constant(fused_elementwise.onednn_inference(s.dtype)), scores)
    got = traced(lambda s: tf.nn.softmax(s), scores)
    want = tf.cast(tf.nn.softmax(tf.cast(scores, tf.float32)), tf.bfloat16)
    assert bool(used) == BF16_ON_ONEDNN
    if BF16_ON_ONEDNN:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_attention_inference_form_equals_the_training_form(dtype):
    rng = np.random.default_rng(4)
    query, key = (tf.cast(rng.normal(0.0, 2.0, (3, 2, 5, 64)), dtype) for _ in range(2))
    bias = attention_bias(tf.constant((np.arange(5)[None, :] < [[5], [3], [1]]).astype("int32")))
    forms = {
        inference: traced(lambda q, k, b: attention_probabilities(q, k, b, 1 / 8, inference=inference), query, key, bias)
        for inference in (True, False)
    }
    assert forms[True].dtype == forms[False].dtype == dtype
    got, want = (forms[inference].numpy().astype("float32") for inference in (True, False))
    assert np.all(got[1, ..., 3:] == 0) and np.all(got[2, ..., 1:] == 0)  # masked keys
    # Same float32 softmax of the same scores; at most the last bit of the rounding differs.
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 2**-7, atol=1e-7)


def test_gelu_for_inference_equals_gelu_and_fuses_into_the_matmul():
    x = tf.constant(np.random.default_rng(0).normal(0, 3, (64, 48)), tf.float32)
    np.testing.assert_allclose(traced(gelu_for_inference, x), traced(gelu, x), rtol=1e-6, atol=1e-6)
    ffn = FeedForwardSubLayer(hidden_size=48, intermediate_size=96)
    ffn.build((64, 48))
    run = tf.function(lambda states: ffn(states, training=False))
    np.testing.assert_allclose(run(x), ffn(x, training=False), rtol=1e-5, atol=1e-5)  # eager: plain ops
    ran = executed_op_types(run, x)
    assert ran["_MklNativeFusedMatMul"] == 2 and not {"Tanh", "Sigmoid", "Pow"} & set(ran), ran
    assert xla_kernels(run, x) == {"_add_and_norm_forward"}


@pytest.mark.parametrize("shapes,policy", [("static", "float32"), ("dynamic", "float32"), ("static", "mixed_bfloat16")])
def test_model_inference_runs_the_fused_onednn_kernels(shapes, policy):  # dynamic: GLUE's padded batches
    config = tiny()
    layers = config.num_hidden_layers
    model = AlbertModel(config, dtype=None if policy == "float32" else policy)
    inputs = {k: tf.constant(v) for k, v in backbone_inputs(batch_for(config)).items()}
    signature = [{k: tf.TensorSpec([None, None], tf.int32) for k in inputs}] if shapes == "dynamic" else None
    infer = tf.function(lambda batch: model(batch)["sequence_output"], input_signature=signature)
    ran = executed_op_types(infer, inputs)
    if policy == "mixed_bfloat16" and not BF16_ON_ONEDNN:  # the XLA kernels, as in training
        assert "_MklFusedBatchMatMulV2" not in ran and "_gelu_forward" in xla_kernels(infer, inputs)
        return
    assert ran["_MklFusedBatchMatMulV2"] == layers  # scores with their scale and mask
    assert ran["_MklSoftmax"] == layers
    assert ran["_MklBatchMatMulV2"] == 2 * layers  # per-head Q/K/V projections, and probs @ values
    assert ran["_MklNativeFusedMatMul"] == 3 * layers  # attention output, FFN in (with GELU) and out
    assert not {"Tanh", "Sigmoid", "Softmax"} & set(ran), ran
    # The XLA add + LayerNorm kernel (oneDNN has no rewrite for it) needs static shapes.
    assert xla_kernels(infer, inputs) == ({"_add_and_norm_forward"} if shapes == "static" else set())


def inference_in_both_forms(model, inputs):
    """{"onednn" | "portable": model(inputs)}, each from a trace in that form."""
    outputs = {}
    for name, context in (("onednn", contextlib.nullcontext), ("portable", plain_tf_ops)):
        infer = tf.function(lambda batch: model(batch))
        with context():
            infer.get_concrete_function(inputs)
        outputs[name] = infer(inputs)
    return outputs


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_model_inference_same_outputs_as_the_portable_forms(policy):
    config = tiny()
    model = AlbertModel(config, dtype=None if policy == "float32" else policy)
    inputs = {k: tf.constant(v) for k, v in backbone_inputs(batch_for(config)).items()}
    outputs = inference_in_both_forms(model, inputs)
    for key in ("sequence_output", "pooled_output"):
        got, want = (np.asarray(outputs[name][key]) for name in ("onednn", "portable"))
        if policy == "float32":
            np.testing.assert_allclose(got, want, atol=1e-5, err_msg=key)
        else:  # the forms round to bfloat16 at different points (measured: max 2e-3, mean 3e-4)
            assert np.max(np.abs(got - want)) < 0.02 and np.mean(np.abs(got - want)) < 2e-3, key


def test_pretraining_heads_last_block_at_positions_same_in_the_inference_forms():
    # LastBlockAtPositions runs queries on a few rows and keys/values on all: its own projections.
    config = tiny()
    model = AlbertPretrainingModel(config)
    inputs = {k: tf.constant(v) for k, v in batch_for(config, seq=16, predictions=5).items()}
    outputs = inference_in_both_forms(model, inputs)
    for key in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
        np.testing.assert_allclose(outputs["onednn"][key], outputs["portable"][key], atol=2e-5, err_msg=key)
