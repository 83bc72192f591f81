"""The "cpu_inference" kernel set: where its oneDNN forms apply, that they compute what the
reference computes, and that TF's rewrites really fuse them (the kernels that ran, from TF's
profiler)."""

import platform
import re

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertModel, AlbertPretrainingModel, kernels
from albert_tf.models import rebuilt
from albert_tf.kernels.cpu_inference import onednn_forms_apply, onednn_runs
from albert_tf.layers import FeedForwardSubLayer
from albert_tf.layers.attention_mask import attention_bias
from model_test_data import backbone_inputs, batch_for, executed_op_types, tiny, xla_compiled_functions

# TF's x86 Linux wheels carry oneDNN (on by default where the tests run, see conftest.py); whether
# it runs bfloat16 depends on the CPU (AVX-512), so the bfloat16 tests check either branch.
BF16_ON_ONEDNN = onednn_runs(tf.bfloat16)
INFERENCE = kernels.get("cpu_inference")
REFERENCE = kernels.get("reference")
pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="oneDNN ships in x86 builds")


def traced(function, *inputs, jit_compile=False):
    return tf.function(function, jit_compile=jit_compile)(*inputs)


def xla_kernels(function, *inputs):
    """The XLA kernels in the trace of `function` (their names: __inference_<name>_<id>)."""
    graph_def = function.get_concrete_function(*inputs).graph.as_graph_def()
    return {re.fullmatch(r"__inference_(.+)_\d+", name).group(1) for name in xla_compiled_functions(graph_def)}


def test_applies_only_in_traced_graphs_outside_xla():
    def probe(dtype=tf.float32):
        return tf.constant(onednn_forms_apply(dtype))

    assert traced(probe)
    assert traced(lambda: probe(tf.bfloat16)) == BF16_ON_ONEDNN
    assert not traced(lambda: probe(tf.float16))  # the XLA kernels compute float16 in float32
    assert not onednn_forms_apply(tf.float32)  # eager
    assert not traced(probe, jit_compile=True)  # XLA compiles the whole function: no oneDNN rewrites


def test_onednn_softmax_of_bfloat16_is_the_float32_softmax_rounded_once():
    # What lets the inference form take the softmax in bfloat16: oneDNN computes it in float32.
    # Where oneDNN does not run bfloat16 (TF's Eigen softmax rounds each step), the form is not used.
    scores = tf.cast(tf.random.stateless_normal((64, 128), seed=(1, 2), stddev=4.0), tf.bfloat16)
    used = traced(lambda s: tf.constant(onednn_forms_apply(s.dtype)), scores)
    got = traced(lambda s: tf.nn.softmax(s), scores)
    want = tf.cast(tf.nn.softmax(tf.cast(scores, tf.float32)), tf.bfloat16)
    assert bool(used) == BF16_ON_ONEDNN
    if BF16_ON_ONEDNN:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_attention_inference_form_equals_the_reference(dtype):
    rng = np.random.default_rng(4)
    query, key = (tf.cast(rng.normal(0.0, 2.0, (3, 2, 5, 64)), dtype) for _ in range(2))
    bias = attention_bias(tf.constant((np.arange(5)[None, :] < [[5], [3], [1]]).astype("int32")))
    forms = {
        kernel_set.name: traced(lambda q, k, b: kernel_set.attention_probabilities(q, k, b, 1 / 8), query, key, bias)
        for kernel_set in (INFERENCE, REFERENCE)
    }
    assert forms["cpu_inference"].dtype == forms["reference"].dtype == dtype
    got, want = (forms[name].numpy().astype("float32") for name in ("cpu_inference", "reference"))
    assert np.all(got[1, ..., 3:] == 0) and np.all(got[2, ..., 1:] == 0)  # masked keys
    # Same float32 softmax of the same scores; at most the last bit of the rounding differs.
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 2**-7, atol=1e-7)


def test_ffn_gelu_fuses_into_the_matmul_and_equals_the_reference():
    x = tf.constant(np.random.default_rng(0).normal(0, 3, (64, 48)), tf.float32)
    ffn = FeedForwardSubLayer(hidden_size=48, intermediate_size=96, kernels=INFERENCE)
    ffn.build((64, 48))
    reference = FeedForwardSubLayer(hidden_size=48, intermediate_size=96, kernels=REFERENCE)
    reference.build((64, 48))
    reference.set_weights(ffn.get_weights())
    run = tf.function(lambda states: ffn(states, training=False))
    np.testing.assert_allclose(run(x), reference(x, training=False), rtol=1e-5, atol=1e-5)
    ran = executed_op_types(run, x)
    assert ran["_MklNativeFusedMatMul"] == 2 and not {"Tanh", "Sigmoid", "Pow"} & set(ran), ran
    assert xla_kernels(run, x) == {"_add_and_norm_forward"}


@pytest.mark.parametrize("shapes,policy", [("static", "float32"), ("dynamic", "float32"), ("static", "mixed_bfloat16")])
def test_model_inference_runs_the_fused_onednn_kernels(shapes, policy):  # dynamic: GLUE's padded batches
    config = tiny()
    layers = config.num_hidden_layers
    model = AlbertModel(config, dtype=None if policy == "float32" else policy, kernels="cpu_inference")
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


def test_model_inference_moves_no_more_data_than_before_the_keras_ops_move():
    # bench/bench_model.py's inference function (both outputs, so the last block also runs at
    # [CLS]): the data-moving kernels it ran before the layers moved to keras.ops (issue 57), all
    # oneDNN's. Transposes: one head merge per block run (layers + 1) and the per-head kernels'
    # three layouts per pass (Q/K/V for the full blocks, Q and K/V for the [CLS] block).
    config = tiny()
    layers = config.num_hidden_layers
    model = AlbertModel(config, kernels="cpu_inference")
    inputs = {k: tf.constant(v) for k, v in backbone_inputs(batch_for(config)).items()}

    @tf.function
    def infer(batch):
        outputs = model(batch, training=False)
        return outputs["sequence_output"], outputs["pooled_output"]

    ran = executed_op_types(infer, inputs)
    assert ran["_MklTranspose"] == layers + 1 + 3, ran
    assert ran["Cast"] == 1, ran  # the mask to float32: no precision casts
    assert ran["GatherV2"] == 3 and ran["ConcatV2"] == 1, ran  # two embeddings, the rows; their positions
    assert not {"Transpose", "MatMul", "BatchMatMulV2", "Softmax", "Einsum"} & set(ran), ran  # all oneDNN


def inference_in_both_forms(model, inputs):
    """{"onednn" | "portable": outputs}: `model` (the reference kernels) and its "cpu_inference"
    copy, each traced."""
    outputs = {}
    for name, kernel_set in (("onednn", "cpu_inference"), ("portable", "reference")):
        copy = rebuilt(model, kernels=kernel_set)
        outputs[name] = tf.function(lambda batch: copy(batch))(inputs)
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
    # The last block at the heads' positions runs queries on a few rows and keys/values on all:
    # its own projections.
    config = tiny()
    model = AlbertPretrainingModel(config)
    inputs = {k: tf.constant(v) for k, v in batch_for(config, seq=16, predictions=5).items()}
    outputs = inference_in_both_forms(model, inputs)
    for key in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
        np.testing.assert_allclose(outputs["onednn"][key], outputs["portable"][key], atol=2e-5, err_msg=key)
