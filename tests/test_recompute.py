"""`recompute=True`: each block keeps only its input and runs again in the backward pass, with
the gradients of the run without it."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainingModel
from albert_tf.layers.attention import AttentionSubLayer
from albert_tf.models.albert_model import AlbertModel
from albert_tf.pretraining.losses import pretraining_losses

SEQ = 48


def _config(**changes):
    values = dict(vocab_size=40, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=24, max_position_embeddings=64)
    values.update(changes)
    return AlbertConfig(**values)


def _features(config):
    rng = np.random.default_rng(0)
    features = {
        "input_word_ids": rng.integers(1, config.vocab_size, (2, SEQ)).astype(np.int32),
        "input_mask": np.ones((2, SEQ), np.int32),
        "input_type_ids": np.zeros((2, SEQ), np.int32),
        "masked_lm_positions": rng.integers(0, SEQ - 10, (2, 5)).astype(np.int32),
        "masked_lm_ids": rng.integers(1, config.vocab_size, (2, 5)).astype(np.int32),
        "masked_lm_weights": np.ones((2, 5), np.float32),
        "next_sentence_labels": np.array([0, 1], np.int32),
    }
    features["input_mask"][1, SEQ - 10:] = 0
    return {name: tf.constant(value) for name, value in features.items()}


def _gradients(config, recompute, kernels):
    keras.utils.set_random_seed(1)
    backbone = AlbertModel(config, kernels=kernels, recompute=recompute, name="albert")
    model = AlbertPretrainingModel(backbone=backbone)
    features = _features(config)
    inputs = {name: features[name] for name in model.input}

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            loss = pretraining_losses(outputs, features, tf.reduce_sum(features["masked_lm_weights"]), 2).loss
        return tape.gradient(loss, model.trainable_variables)

    return [tf.convert_to_tensor(gradient).numpy() for gradient in step()]


@pytest.mark.parametrize(
    "changes,kernels",
    [
        (dict(), "reference"),
        (dict(inner_group_num=2), "cpu"),
        (dict(attention_type="block_sparse", block_size=4, num_random_blocks=1), "reference"),
    ],
)
def test_recomputed_gradients_equal_the_stored_ones(changes, kernels):
    config = _config(**changes)
    stored = _gradients(config, recompute=False, kernels=kernels)
    recomputed = _gradients(config, recompute=True, kernels=kernels)
    assert len(stored) == len(recomputed)
    for kept, again in zip(stored, recomputed):
        assert np.any(kept)
        np.testing.assert_allclose(again, kept, rtol=0, atol=1e-6)


def test_recompute_runs_each_block_again_in_the_backward_pass(monkeypatch):
    """Without it the attention sub-layer runs once per block (and once for the rows the heads
    read); with it, once more per block while the gradient is taken."""
    config = _config()
    features = _features(config)
    calls = []
    original = AttentionSubLayer.call
    monkeypatch.setattr(AttentionSubLayer, "call", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    for recompute, expected in ((False, 2 + 1), (True, 2 + 1 + 2)):
        model = AlbertModel(config, recompute=recompute)
        inputs = {name: features[name] for name in model.input}
        calls.clear()
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            loss = tf.reduce_sum(outputs["sequence_output"]) + tf.reduce_sum(outputs["pooled_output"])
        tape.gradient(loss, model.trainable_variables)
        assert len(calls) == expected, recompute


def test_recompute_is_no_part_of_the_albert_config():
    model = AlbertModel(_config(), recompute=True)
    assert "recompute" not in model.config.to_dict()
    assert model.get_config()["recompute"] is True
    assert AlbertModel.from_config(model.get_config()).encoder.recompute


def test_recompute_refuses_to_train_with_dropout():
    config = _config(hidden_dropout_prob=0.1)
    model = AlbertModel(config, recompute=True)
    features = _features(config)
    inputs = {name: features[name] for name in model.input}
    model(inputs)  # inference is fine: no backward pass
    with pytest.raises(ValueError, match="`recompute` would draw new dropout masks"):
        model(inputs, training=True)
