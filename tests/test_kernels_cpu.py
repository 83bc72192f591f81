"""The "cpu" kernel set: where its XLA kernels apply, and that it computes what the reference
kernels compute, gradients included, in float32, bfloat16 and float16."""

import math
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertPretrainingModel, kernels
from albert_tf.kernels import xla_elementwise
from albert_tf.kernels.gelu import gelu
from albert_tf.layers.attention_mask import attention_bias
from albert_tf.layers.layer_norm import layer_norm
from model_test_data import batch_for, tiny, xla_compiled_functions

MODES = {"xla": "cpu", "plain": "reference"}
KERNEL_NAMES = {f"{name}_{direction}" for name in ("_gelu", "_add_and_norm", "masked_softmax")
           for direction in ("forward", "backward")}


def weighted_sum(value):
    """A scalar that weights every element differently, so that gradients see each one."""
    weights = tf.sin(tf.reshape(tf.range(value.shape.num_elements(), dtype=tf.float32), value.shape))
    return tf.reduce_sum(tf.cast(value, tf.float32) * weights)


def traced_in_both_modes(operation, *inputs):
    """{mode: (value, gradients of weighted_sum of it w.r.t. inputs)} of `operation(kernel_set,
    *inputs)` traced with the "cpu" ("xla") and "reference" ("plain") kernel sets; checks that
    only the "cpu" trace holds XLA kernels."""
    results = {}
    for mode, name in MODES.items():
        kernel_set = kernels.get(name)

        @tf.function
        def value_and_gradients():
            with tf.GradientTape() as tape:
                tape.watch(inputs)
                value = operation(kernel_set, *inputs)
                loss = weighted_sum(value)
            return value, tape.gradient(loss, inputs)

        results[mode] = value_and_gradients()
        compiled = xla_compiled_functions(value_and_gradients.get_concrete_function().graph.as_graph_def())
        assert bool(compiled) == (mode == "xla"), (mode, compiled)
    return results


def test_kernels_apply_in_static_traces_only():
    seen = {}

    def probe(name):
        return tf.function(lambda x: seen.__setitem__(name, xla_elementwise.applies(x)) or x)

    probe("static")(tf.zeros((2, 3)))
    probe("unknown_batch").get_concrete_function(tf.TensorSpec((None, 3)))
    assert seen == {"static": True, "unknown_batch": False}
    assert not xla_elementwise.applies(tf.zeros((2, 3)))  # eager


def gelu_through_dense(x):
    """The operation `kernel_set.dense(identity, x, "gelu")`, which is gelu(x)."""
    layer = identity_dense(x.shape[-1], x.dtype.name)
    return lambda kernel_set, x: kernel_set.dense(layer, x, activation="gelu")


def identity_dense(width, dtype):
    """A Dense with an identity kernel and zero bias: `dense(layer, x, "gelu")` is gelu(x)."""
    layer = keras.layers.Dense(width, kernel_initializer="identity", bias_initializer="zeros", dtype=dtype)
    layer.build((None, width))
    return layer


def test_gelu_kernel_equals_the_reference_with_gradient():
    x = tf.constant(np.random.default_rng(0).normal(0, 3, (64, 48)), tf.float32)
    results = traced_in_both_modes(gelu_through_dense(x), x)
    np.testing.assert_allclose(results["xla"][0], results["plain"][0], atol=1e-6, rtol=1e-6)
    # The reference's autodiff of tanh loses a few ulps where it saturates; the kernel's does not.
    np.testing.assert_allclose(results["xla"][1][0], results["plain"][1][0], atol=5e-6, rtol=1e-5)


@pytest.mark.parametrize("traced", [False, True], ids=["eager_tf_ops", "traced_xla_kernel"])
@pytest.mark.parametrize("dtype, atol, rtol", [("float32", 2e-6, 0.0), ("bfloat16", 2e-2, 2e-2)])
def test_gelu_gradient_matches_float64_autodiff_of_the_originals_formula(dtype, atol, rtol, traced):
    x64 = tf.constant(np.linspace(-8, 8, 401), tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x64)
        original = 0.5 * x64 * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)))
    want = tape.gradient(original, x64).numpy()
    x = tf.cast(x64, dtype)

    def value_and_gradient(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = gelu(x)
        return y, tape.gradient(y, x)

    y, got = (tf.function(value_and_gradient) if traced else value_and_gradient)(x)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(tf.cast(got, tf.float64).numpy(), want, atol=atol, rtol=rtol)
    np.testing.assert_allclose(tf.cast(y, tf.float64).numpy(), original.numpy(), atol=8 * atol, rtol=rtol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_gelu_kernel_keeps_half_precision_dtypes_and_computes_in_float32(dtype):
    x = tf.cast(tf.reshape(tf.linspace(-6.0, 6.0, 256), (16, 16)), dtype)
    value, (grad,) = traced_in_both_modes(gelu_through_dense(x), x)["xla"]
    assert value.dtype == grad.dtype == x.dtype
    # The float32 GELU of x, rounded once to the dtype.
    want = tf.cast(gelu(tf.cast(x, tf.float32)), dtype)
    np.testing.assert_array_equal(value.numpy(), want.numpy())


def test_add_and_norm_kernel_equals_the_keras_layer_norm_with_gradients():
    rng = np.random.default_rng(1)
    norm = layer_norm("norm")
    norm.build((None, None, 16))
    norm.gamma.assign(rng.normal(1.0, 0.3, 16).astype("float32"))
    norm.beta.assign(rng.normal(0.0, 0.3, 16).astype("float32"))
    residual = tf.constant(rng.normal(2.0, 3.0, (3, 5, 16)), tf.float32)
    output = tf.constant(rng.normal(0.0, 1.0, (3, 5, 16)), tf.float32)
    gamma, beta = norm.gamma.value, norm.beta.value  # the tf.Variables, which a tape can watch
    results = traced_in_both_modes(lambda kernel_set, r, o, g, b: kernel_set.add_and_norm(norm, r, o), residual, output, gamma, beta)
    np.testing.assert_allclose(results["xla"][0], results["plain"][0], atol=2e-6)
    for got, want in zip(results["xla"][1], results["plain"][1]):
        np.testing.assert_allclose(got, want, atol=2e-5, rtol=1e-5)


def test_add_and_norm_kernel_takes_a_half_precision_output_and_returns_float32():
    norm = layer_norm("norm")
    norm.build((None, 8))
    residual = tf.random.normal((4, 8))
    output = tf.cast(tf.random.normal((4, 8)), tf.bfloat16)
    results = traced_in_both_modes(lambda kernel_set, r, o: kernel_set.add_and_norm(norm, r, o), residual, output)
    value, (grad_residual, grad_output) = results["xla"]
    assert value.dtype == grad_residual.dtype == tf.float32 and grad_output.dtype == tf.bfloat16
    np.testing.assert_allclose(value, results["plain"][0], atol=2e-6)


def test_attention_softmax_kernel_equals_plain_ops_with_gradients():
    rng = np.random.default_rng(3)
    query = tf.constant(rng.normal(0.0, 2.0, (4, 2, 5, 4)), tf.float32)
    key = tf.constant(rng.normal(0.0, 2.0, (4, 2, 7, 4)), tf.float32)
    # The last example has every key masked (an all-padding row): the backward must still use
    # the forward's probabilities, not ones recomputed around the -10000 adder.
    bias = attention_bias(tf.constant((np.arange(7)[None, :] < [[7], [4], [1], [0]]).astype("int32")))
    results = traced_in_both_modes(lambda kernel_set, q, k, b: kernel_set.attention_probabilities(q, k, b, 0.37), query, key, bias)
    value = results["xla"][0].numpy()
    want = tf.nn.softmax(0.37 * tf.matmul(query, key, transpose_b=True) + bias).numpy()
    np.testing.assert_allclose(value, want, atol=1e-6)
    np.testing.assert_allclose(value, results["plain"][0], atol=1e-6)
    assert np.all(value[1, ..., 4:] < 1e-4) and np.all(value[2, ..., 1:] < 1e-4)  # masked keys
    for got, want in zip(results["xla"][1], results["plain"][1]):  # query, key, then the bias
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)


def test_attention_softmax_kernel_keeps_half_precision_and_the_same_bits_at_head_size_64():
    query, key = (tf.cast(tf.random.normal((2, 2, 3, 64)), tf.bfloat16) for _ in range(2))
    bias = attention_bias(tf.ones((2, 3), tf.int32))
    results = traced_in_both_modes(lambda kernel_set, q, k, b: kernel_set.attention_probabilities(q, k, b, 1 / 8), query, key, bias)
    value, (grad_query, grad_key, grad_bias) = results["xla"]
    assert value.dtype == grad_query.dtype == grad_key.dtype == tf.bfloat16 and grad_bias.dtype == tf.float32
    np.testing.assert_array_equal(value.numpy(), results["plain"][0].numpy())


def pretraining_step_in_both_modes(config, dtype, inputs):
    """{mode: (outputs, gradients)} of one traced training step of a model with the same weights
    in each kernel set; checks which kernels it ran. Returns them and the reference model."""
    results = {}
    keras.utils.set_random_seed(1)
    reference = AlbertPretrainingModel(config, dtype=dtype)
    # float16 gradients this small underflow without a loss scale, as in mixed_float16 training.
    loss_scale = 2.0**12 if dtype == "mixed_float16" else 1.0
    for mode, name in MODES.items():
        model = kernels.with_kernels(reference, name)

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                outputs = model(inputs, training=True)
                loss = tf.reduce_mean(outputs["mlm_logits"] ** 2) + tf.reduce_mean(outputs["sop_logits"] ** 2)
                loss *= loss_scale
            return outputs, tape.gradient(loss, model.trainable_variables)

        results[mode] = step()
        compiled = xla_compiled_functions(step.get_concrete_function().graph.as_graph_def())
        # Every kernel, forward and backward, in the XLA trace (names: __inference_<name>_<id>).
        ran = {re.fullmatch(r"__inference_(.+)_\d+", name).group(1) for name in compiled}
        assert ran == (KERNEL_NAMES if mode == "xla" else set()), (mode, compiled)
    return results, reference


def test_pretraining_model_same_outputs_and_gradients_either_way():
    config = tiny()
    results, model = pretraining_step_in_both_modes(config, None, batch_for(config, batch=3, seq=16, predictions=4))
    for name in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
        np.testing.assert_allclose(results["xla"][0][name], results["plain"][0][name], atol=1e-5)
    for variable, got, want in zip(model.trainable_variables, results["xla"][1], results["plain"][1]):
        np.testing.assert_allclose(tf.convert_to_tensor(got), tf.convert_to_tensor(want), atol=1e-6, rtol=1e-4,
                                   err_msg=variable.path)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_pretraining_model_in_half_precision_same_gradients_either_way(policy):
    # The kernels compute in float32 where the reference rounds to half precision (GELU), so
    # gradients agree to that rounding, not bit for bit. A gradient path the kernels dropped
    # would be off by its whole size.
    config = tiny()
    results, model = pretraining_step_in_both_modes(config, policy, batch_for(config, batch=3, seq=16, predictions=4))
    for variable, got, want in zip(model.trainable_variables, results["xla"][1], results["plain"][1]):
        if variable.path.endswith("key/bias"):
            continue  # exactly zero (the softmax ignores a constant per query): rounding noise either way
        got, want = (np.asarray(tf.convert_to_tensor(g)) for g in (got, want))
        assert np.linalg.norm(got - want) <= 0.02 * np.linalg.norm(want), variable.path  # measured <= 0.7%
