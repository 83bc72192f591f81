"""Mixed precision: what is cast, how often, and that the float32 parts really are float32."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertModel, AlbertPretrainingModel
from albert_tf.kernels import get as kernel_set, weight_casts
from albert_tf.layers import SharedTransformerEncoder
from model_test_data import backbone_inputs, batch_for, tiny


def traced_casts(model, inputs, training=None):
    """The Cast ops of one traced forward pass of `model`."""
    function = tf.function(lambda batch: model(batch, training=training))
    graph = function.get_concrete_function({k: tf.constant(v) for k, v in inputs.items()}).graph
    return [op for op in graph.get_operations() if op.type == "Cast"]


def weights_read(cast):
    """The variable reads whose values `cast` takes, through ops that join or rearrange them."""
    reads, pending = [], [cast.inputs[0].op]
    while pending:
        op = pending.pop()
        if op.type == "ReadVariableOp":
            reads.append(op)
        elif op.type in JOINING_OR_REARRANGING:
            pending.extend(t.op for t in JOINING_OR_REARRANGING[op.type](list(op.inputs)))
    return reads


# The data inputs of the ops that join or rearrange weights (not their axes or shapes).
JOINING_OR_REARRANGING = {"ConcatV2": lambda inputs: inputs[:-1], "Pack": lambda inputs: inputs,
                          "Reshape": lambda inputs: inputs[:1], "Transpose": lambda inputs: inputs[:1]}


@pytest.mark.parametrize("kernels", ["cpu", "cpu_inference"])
def test_cpu_kernels_cast_shared_encoder_weights_once_per_pass_not_once_per_layer(kernels):
    config = tiny(num_hidden_layers=6)
    model = AlbertModel(config, dtype="mixed_bfloat16", kernels=kernels)
    inputs = backbone_inputs(batch_for(config))
    encoder_weight_casts = [
        op for op in traced_casts(model, inputs) if "/encoder" in op.name and weights_read(op)
    ]
    # q, k, v, output and the two FFN denses, kernel and bias each: 12 weights, each cast once for
    # all 6 layers; q, k and v are joined first (one kernel and one bias), so 8 casts. The last
    # block's second run, with queries at [CLS] only (for the pooler), projects q alone and k, v
    # joined: 4 more casts, of 6 weights. A cast per layer would be 6 times as many.
    matmul_weights = [w for w in model.encoder.weights if "layer_norm" not in w.path]
    assert len(matmul_weights) == 12
    assert sum(len(weights_read(op)) for op in encoder_weight_casts) == len(matmul_weights) + 6
    assert len(encoder_weight_casts) == 8 + 4


# Ops that move or select values without changing them: a cast before one of them and a cast
# after it still form a round trip.
VALUE_PRESERVING = {"Identity", "IdentityN", "Reshape", "Transpose", "ExpandDims", "Squeeze",
                    "StridedSlice", "GatherV2", "ConcatV2"}


def cast_source(tensor):
    """The op that produced the values of `tensor`, looking through value-preserving ops."""
    while tensor.op.type in VALUE_PRESERVING:
        tensor = tensor.op.inputs[tensor.value_index if tensor.op.type == "IdentityN" else 0]
    return tensor.op


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("kernels", ["reference", "cpu", "cpu_inference"])
def test_no_value_is_cast_down_and_back_up(training, kernels):
    config = tiny(num_hidden_layers=3)
    model = AlbertPretrainingModel(config, dtype="mixed_bfloat16", kernels=kernels)
    casts = traced_casts(model, batch_for(config), training)
    round_trips = [op.name for op in casts if cast_source(op.inputs[0]).type == "Cast"]
    assert not round_trips, round_trips


@pytest.mark.parametrize("kernels", ["reference", "eager"])
@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_residual_stream_and_layer_norm_outputs_are_full_float32(policy, kernels):
    config = tiny(num_hidden_layers=3)
    model = AlbertModel(config, dtype=policy, kernels=kernels)
    outputs = model(backbone_inputs(batch_for(config)))
    half = "bfloat16" if policy == "mixed_bfloat16" else "float16"
    for layer_output in outputs["encoder_outputs"]:
        values = np.asarray(layer_output)
        assert layer_output.dtype == "float32"
        # A LayerNorm output rounded to half precision would survive the round trip unchanged.
        rounded = np.asarray(tf.cast(tf.cast(values, half), tf.float32))
        assert np.mean(values != rounded) > 0.5


@pytest.mark.parametrize("traced,kernels", [(False, "cpu"), (True, "cpu_inference"), (True, "cpu")])
def test_sharing_one_weight_cast_keeps_gradients_of_a_cast_per_use(monkeypatch, traced, kernels):
    # "cpu_inference" traces per-head weights, "cpu" the joined ones.
    config = tiny(num_hidden_layers=4)
    encoder = SharedTransformerEncoder(
        num_hidden_layers=4, hidden_size=config.hidden_size, num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size, kernels=kernel_set(kernels), dtype="mixed_bfloat16",
    )
    rng = np.random.default_rng(1)
    states = tf.constant(rng.normal(size=(2, 7, config.hidden_size)), tf.float32)
    mask = tf.constant(np.ones((2, 7)), tf.int32)
    positions = tf.constant([[0, 3], [1, 6]], tf.int32)
    encoder(states, mask, positions)

    def loss_and_gradients():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(encoder(states, mask, positions)[0][-1] ** 2)
        return loss, tape.gradient(loss, encoder.trainable_variables)

    reuses = []
    shared_reuse = weight_casts._reuse
    monkeypatch.setattr(weight_casts, "_reuse", lambda values, copy, make: reuses.append(1) or shared_reuse(values, copy, make))
    shared_loss, shared_grads = (tf.function(loss_and_gradients) if traced else loss_and_gradients)()
    assert reuses  # the shared copies were really reused
    # The reference: every reuse is a plain cast of the variable, as a Keras layer does per call.
    monkeypatch.setattr(weight_casts, "_reuse", lambda values, copy, make: make(values))
    per_use_loss, per_use_grads = (tf.function(loss_and_gradients) if traced else loss_and_gradients)()
    assert float(shared_loss) == float(per_use_loss)
    for variable, shared, per_use in zip(encoder.trainable_variables, shared_grads, per_use_grads):
        assert shared.dtype == "float32" and np.any(np.asarray(shared) != 0), variable.path
        np.testing.assert_allclose(shared, per_use, rtol=1e-5, atol=1e-6, err_msg=variable.path)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_symbolic_outputs_declare_the_dtypes_the_model_returns(policy):
    config = tiny(num_hidden_layers=2)
    model = AlbertPretrainingModel(config, dtype=policy)
    outputs = model(batch_for(config))
    assert outputs["sequence_output"].dtype == "float32"
    for name, symbolic in model.output.items():
        assert symbolic.dtype == keras.backend.standardize_dtype(outputs[name].dtype), name
