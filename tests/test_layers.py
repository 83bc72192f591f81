"""The layers, checked against a plain NumPy transcription of the original's math."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertModel
from albert_tf.layers import (
    AttentionSubLayer,
    ClassificationHead,
    FactorizedEmbedding,
    FeedForwardSubLayer,
    MaskedLMHead,
    SentenceOrderHead,
    SharedTransformerEncoder,
)
from albert_tf.kernels import get as kernel_set
from albert_tf.layers.activations import gelu
from albert_tf.layers.layer_norm import LAYER_NORM_EPSILON

REFERENCE = kernel_set("reference")  # the sub-layers compute through the kernel set their model gives


def small_config(**changes):
    values = dict(
        vocab_size=97, embedding_size=8, hidden_size=12, num_hidden_layers=4, num_attention_heads=3,
        intermediate_size=20, max_position_embeddings=16, type_vocab_size=2,
    )
    values.update(changes)
    return AlbertConfig(**values)


def np_layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def np_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def np_albert(weights, config, ids, mask, types):
    """The original's forward pass (reference section 2.2), written independently in NumPy."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    seq = ids.shape[1]
    x = w["embeddings/word_embeddings"][ids] + w["embeddings/token_type_embeddings"][types]
    x = x + w["embeddings/position_embeddings"][:seq][None]
    x = np_layer_norm(x, w["embeddings/layer_norm/gamma"], w["embeddings/layer_norm/beta"])
    x = x @ w["embeddings/projection/kernel"] + w["embeddings/projection/bias"]
    heads, size = config.num_attention_heads, config.hidden_size // config.num_attention_heads
    adder = (1.0 - mask[:, None, None, :]) * -10000.0
    outputs = []
    for layer in range(config.num_hidden_layers):
        group = int(layer / config.num_hidden_layers * config.num_hidden_groups)
        for inner in range(config.inner_group_num):
            p = f"encoder/group_{group}_inner_group_{inner}"

            def dense(v, name, prefix):
                return v @ w[f"{prefix}/{name}/kernel"] + w[f"{prefix}/{name}/bias"]

            a = f"{p}_attention"

            def split(v):
                return v.reshape(v.shape[0], seq, heads, size).transpose(0, 2, 1, 3)

            q, k, v = (split(dense(x, n, a)) for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + adder
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(x.shape)
            x = np_layer_norm(x + dense(context, "output_dense", a), w[f"{a}/layer_norm/gamma"],
                              w[f"{a}/layer_norm/beta"])
            f = f"{p}_ffn"
            h = np_gelu(dense(x, "intermediate", f))
            x = np_layer_norm(x + dense(h, "output_dense", f), w[f"{f}/layer_norm/gamma"],
                              w[f"{f}/layer_norm/beta"])
            outputs.append(x)
    pooled = np.tanh(x[:, 0] @ w["pooler/kernel"] + w["pooler/bias"])
    return outputs, pooled


def random_batch(config, batch=3, seq=10, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, config.vocab_size, (batch, seq)).astype("int32")
    mask = np.ones((batch, seq), "int32")
    mask[1, 6:] = 0  # padding in the batch
    types = np.zeros((batch, seq), "int32")
    types[:, seq // 2:] = 1
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}


def randomize(model, seed=1):
    """Non-trivial weights everywhere (LayerNorm gammas and biases included)."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0.0, 0.5, variable.shape).astype("float32"))


@pytest.mark.parametrize("groups, inner", [(1, 1), (2, 1), (2, 2)])
def test_backbone_matches_numpy_transcription_of_the_original(groups, inner):
    config = small_config(num_hidden_groups=groups, inner_group_num=inner)
    model = AlbertModel(config)
    randomize(model)
    batch = random_batch(config)
    ours = model(batch)
    weights = {v.path: v.numpy() for v in model.weights}
    expected_outputs, expected_pooled = np_albert(
        weights, config, batch["input_word_ids"], batch["input_mask"].astype("float64"),
        batch["input_type_ids"])
    assert len(ours["encoder_outputs"]) == len(expected_outputs) == 4 * inner
    for got, want in zip(ours["encoder_outputs"], expected_outputs):
        np.testing.assert_allclose(got, want, atol=2e-5, rtol=1e-4)
    np.testing.assert_allclose(ours["sequence_output"], expected_outputs[-1], atol=2e-5, rtol=1e-4)
    np.testing.assert_allclose(ours["pooled_output"], expected_pooled, atol=2e-5, rtol=1e-4)


def test_gelu_is_the_tanh_approximation():
    x = np.linspace(-6, 6, 101).astype("float32")
    np.testing.assert_allclose(gelu(x), np_gelu(x), atol=1e-6)
    erf_gelu = keras.activations.gelu(x, approximate=False)
    assert np.max(np.abs(np.asarray(erf_gelu) - np_gelu(x))) > 1e-4  # the two forms differ


def test_layer_norm_epsilon_is_the_originals():
    assert LAYER_NORM_EPSILON == 1e-12
    layer = AttentionSubLayer(12, 3, kernels=REFERENCE)
    layer.build((None, None, 12))
    assert layer.layer_norm.epsilon == 1e-12


def test_projection_exists_only_when_embedding_and_hidden_sizes_differ():
    factorized = FactorizedEmbedding(97, 8, 12, 16, 2)
    factorized.build((None, None))
    square = FactorizedEmbedding(97, 12, 12, 16, 2)
    square.build((None, None))
    assert factorized.projection is not None and len(factorized.weights) == 7
    assert square.projection is None and len(square.weights) == 5
    ids = np.zeros((2, 5), "int32")
    assert square(ids, ids).shape == (2, 5, 12)


def test_sequence_longer_than_positions_is_an_error():
    embedding = FactorizedEmbedding(97, 8, 12, 16, 2)
    too_long = np.zeros((1, 17), "int32")
    with pytest.raises(ValueError, match="sequence length 17 exceeds max_position_embeddings \\(16\\)"):
        embedding(too_long, too_long)
    traced = tf.function(embedding, input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="exceeds max_position_embeddings"):
        traced(too_long, too_long)


def test_padded_positions_do_not_change_real_outputs():
    config = small_config()
    model = AlbertModel(config)
    batch = random_batch(config)
    other = {k: v.copy() for k, v in batch.items()}
    other["input_word_ids"][1, 6:] = 5  # change only what the mask hides
    first, second = model(batch)["sequence_output"], model(other)["sequence_output"]
    np.testing.assert_allclose(first[1, :6], second[1, :6], atol=1e-6)


@pytest.mark.parametrize(
    "sharing, attention_owners, ffn_owners",
    [("all", [0], [0]), ("attention", [0], [0, 1, 2, 3]), ("ffn", [0, 1, 2, 3], [0]),
     ("none", [0, 1, 2, 3], [0, 1, 2, 3])],
)
def test_sharing_modes_own_the_right_sub_layers(sharing, attention_owners, ffn_owners):
    encoder = SharedTransformerEncoder(4, 12, 3, 20, sharing=sharing, kernels=REFERENCE)
    assert encoder.owners("attention") == attention_owners
    assert encoder.owners("ffn") == ffn_owners
    encoder.build((None, None, 12))
    per_attention = 4 * (12 * 12 + 12) + 2 * 12
    per_ffn = 12 * 20 + 20 + 20 * 12 + 12 + 2 * 12
    assert encoder.count_params() == len(attention_owners) * per_attention + len(ffn_owners) * per_ffn


def test_group_index_is_the_originals_float_expression():
    # int(15 / 22 * 22) == 14 in floating point: the original maps layers 14 and 15 to group 14.
    encoder = SharedTransformerEncoder(22, 12, 3, 20, num_hidden_groups=22, kernels=REFERENCE)
    assert encoder.owner("attention", 15) == 14
    assert 15 not in encoder.owners("attention") and len(encoder.owners("attention")) == 21
    grouped = SharedTransformerEncoder(12, 12, 3, 20, num_hidden_groups=4, kernels=REFERENCE)
    assert [grouped.owner("ffn", layer) for layer in range(12)] == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3


@pytest.mark.parametrize(
    "layer",
    [
        FactorizedEmbedding(97, 8, 12, 16, 2, hidden_dropout_prob=0.1, name="embeddings"),
        AttentionSubLayer(12, 3, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.2, kernels=kernel_set("cpu")),
        FeedForwardSubLayer(12, 20, hidden_act="relu", kernels=REFERENCE),
        SharedTransformerEncoder(4, 12, 3, 20, num_hidden_groups=2, inner_group_num=2, sharing="ffn", kernels=REFERENCE),
        SentenceOrderHead(12),
        ClassificationHead(3, 12, dropout_rate=0.2),
        MaskedLMHead(FactorizedEmbedding(97, 8, 12, 16, 2), hidden_act="relu", name="masked_lm_head"),
    ],
    ids=lambda layer: type(layer).__name__,
)
def test_get_config_round_trip(layer):
    config = layer.get_config()
    assert "kernels" not in config  # a runtime choice: the model hands its set to the layers it builds
    given = {"kernels": layer.kernels} if hasattr(layer, "kernels") else {}
    clone = type(layer).from_config({**config, **given})
    assert clone.get_config() == config


def test_encoder_validates_at_construction():
    with pytest.raises(ValueError, match="num_hidden_layers \\(12\\) must be divisible by num_hidden_groups \\(5\\)"):
        SharedTransformerEncoder(12, 12, 3, 20, num_hidden_groups=5, kernels=REFERENCE)
    with pytest.raises(ValueError, match="unknown sharing 'some'"):
        SharedTransformerEncoder(12, 12, 3, 20, sharing="some", kernels=REFERENCE)
    with pytest.raises(ValueError, match="hidden_size \\(12\\) must be divisible by num_attention_heads \\(5\\)"):
        AttentionSubLayer(12, 5, kernels=REFERENCE)
