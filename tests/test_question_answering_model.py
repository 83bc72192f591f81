"""AlbertQuestionAnswering: the original's v1.1/v2.0 heads and losses, and starting its encoder from checkpoints."""

import warnings

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainingModel
from albert_tf.checkpoints import backbone_variables
from albert_tf.checkpoints import save_tf1_checkpoint
from albert_cli.cli import UsageError, load_init_checkpoint
from albert_tf.models import AlbertQuestionAnswering
from squad_test_data import TINY_CONFIG

B, L = 3, 12


@pytest.fixture(scope="module")
def config():
    return AlbertConfig.from_json_file(TINY_CONFIG)


def _inputs(start_positions=(4, 0, 9)):
    rng = np.random.default_rng(1)
    p_mask = np.zeros((B, L), np.int32)
    p_mask[:, 1:4] = 1  # question and [SEP]
    p_mask[:, -1] = 1
    p_mask[2, 10:] = 1  # padding
    input_mask = np.ones((B, L), np.int32)
    input_mask[2, 10:] = 0
    return {"input_word_ids": tf.constant(rng.integers(5, 2000, (B, L)), tf.int32),
            "input_mask": tf.constant(input_mask),
            "input_type_ids": tf.zeros((B, L), tf.int32), "p_mask": tf.constant(p_mask),
            "start_positions": tf.constant(start_positions, tf.int32)}


def _log_softmax(x):
    x = np.asarray(x, np.float64)
    return x - x.max(-1, keepdims=True) - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))


def test_v1_loss_is_the_mean_of_start_and_end_cross_entropy(config):
    model = AlbertQuestionAnswering(config)
    inputs = _inputs()
    outputs = model(inputs, training=False)
    assert outputs["start_logits"].dtype == tf.float32 and outputs["start_logits"].shape == (B, L)
    y = {"start_positions": tf.constant([4, 0, 9]), "end_positions": tf.constant([5, 0, 9]),
         "is_impossible": tf.constant([0.0, 1.0, 0.0])}
    loss = float(model.compute_loss(inputs, y, outputs))
    rows = np.arange(B)
    expected = -(_log_softmax(outputs["start_logits"])[rows, [4, 0, 9]].mean()
                 + _log_softmax(outputs["end_logits"])[rows, [5, 0, 9]].mean()) / 2
    assert loss == pytest.approx(expected, rel=1e-5)


def test_v2_masks_positions_and_adds_half_the_answerability_loss(config):
    model = AlbertQuestionAnswering(config, version_2_with_negative=True, dropout_rate=0.0)
    inputs = _inputs()
    p_mask = inputs["p_mask"].numpy().astype(bool)
    train_out = {k: v.numpy() for k, v in model(inputs, training=True).items()}
    assert np.all(train_out["start_log_probs"][p_mask] < -1e29)
    np.testing.assert_allclose(np.exp(train_out["start_log_probs"]).sum(-1), 1.0, rtol=1e-5)
    y = {"start_positions": tf.constant([4, 0, 9]), "end_positions": tf.constant([5, 0, 9]),
         "is_impossible": tf.constant([0.0, 1.0, 0.0])}
    loss = float(model.compute_loss(inputs, y, {k: tf.constant(v) for k, v in train_out.items()}))
    rows = np.arange(B)
    logits = train_out["cls_logits"].astype(np.float64)
    labels = np.array([0.0, 1.0, 0.0])
    bce = np.mean(np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits))))
    expected = -(train_out["start_log_probs"][rows, [4, 0, 9]].mean()
                 + train_out["end_log_probs"][rows, [5, 0, 9]].mean()) / 2 + 0.5 * bce
    assert loss == pytest.approx(expected, rel=1e-5)

    infer_out = {k: v.numpy() for k, v in model(inputs, training=False).items()}
    assert infer_out["start_top_index"].shape == (B, 5) and infer_out["end_top_index"].shape == (B, 25)
    for b in range(B):
        assert not p_mask[b, infer_out["start_top_index"][b]].any()
        assert not p_mask[b, infer_out["end_top_index"][b]].any()
    np.testing.assert_allclose(infer_out["cls_logits"], train_out["cls_logits"], rtol=1e-5, atol=1e-6)
    # The beam's ends for its k-th start are the training path's ends given that start.
    for k in range(5):
        starts = infer_out["start_top_index"][:, k]
        given = model(dict(inputs, start_positions=tf.constant(starts, tf.int32)), training=True)
        given_end = given["end_log_probs"].numpy()
        for b in range(B):
            top = np.argsort(-given_end[b], kind="stable")[:5]
            np.testing.assert_allclose(infer_out["end_top_log_probs"][b, 5 * k:5 * k + 5], given_end[b, top],
                                       rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(infer_out["start_top_log_probs"][:, k],
                                   train_out["start_log_probs"][np.arange(B), starts], rtol=1e-5)


@pytest.mark.parametrize("version_2_with_negative", [False, True])
def test_training_warns_of_no_missing_gradient_and_keeps_the_pooler(config, version_2_with_negative):
    """Keras warned "Gradients do not exist for variables ['pooler/kernel', 'pooler/bias']"."""
    model = AlbertQuestionAnswering(config, version_2_with_negative=version_2_with_negative)
    inputs = _inputs()
    model(inputs, training=False)
    pooler = [weight.numpy() for weight in model.albert.pooler.weights]
    model.compile(optimizer="sgd")
    y = {"start_positions": tf.constant([4, 0, 9]), "end_positions": tf.constant([5, 0, 9]),
         "is_impossible": tf.constant([0.0, 1.0, 0.0])}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(inputs, y, epochs=1, batch_size=B, verbose=0)
    assert not [str(warning.message) for warning in caught if "Gradients do not exist" in str(warning.message)]
    assert [weight.path for weight in model.albert.pooler.weights] == ["pooler/kernel", "pooler/bias"]
    assert all(np.array_equal(before, after.numpy()) for before, after in zip(pooler, model.albert.pooler.weights))


def test_config_round_trip_and_mixed_precision_outputs(config):
    model = AlbertQuestionAnswering(config, version_2_with_negative=True, start_n_top=3, end_n_top=2,
                                    dtype="mixed_bfloat16")
    outputs = model(_inputs(), training=False)
    assert outputs["end_top_index"].shape == (B, 6) and outputs["cls_logits"].dtype == tf.float32
    rebuilt = AlbertQuestionAnswering.from_config(model.get_config())
    assert (rebuilt.version_2_with_negative, rebuilt.start_n_top, rebuilt.end_n_top) == (True, 3, 2)
    assert rebuilt.albert.embeddings.dtype_policy.name == "mixed_bfloat16"


def test_encoder_starts_from_original_and_own_checkpoints(config, tmp_path):
    pretrained = AlbertPretrainingModel(config)
    save_tf1_checkpoint(pretrained, str(tmp_path / "tf1" / "model.ckpt-best"))
    model = AlbertQuestionAnswering(config, version_2_with_negative=True)
    model(model.example_inputs(), training=False)
    load_init_checkpoint(model.albert, str(tmp_path / "tf1"))
    expected = backbone_variables(pretrained.albert)
    for name, variable in backbone_variables(model.albert).items():
        np.testing.assert_array_equal(variable.numpy(), expected[name].numpy(), err_msg=name)
    # A fine-tuned model's checkpoint (as run_squad.py writes it) starts another task model.
    prefix = tf.train.Checkpoint(model=model).write(str(tmp_path / "tf2" / "model"))
    other = AlbertQuestionAnswering(config)
    other(other.example_inputs(), training=False)
    load_init_checkpoint(other.albert, prefix)
    for mine, theirs in zip(other.albert.weights, model.albert.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    with pytest.raises(UsageError, match="--init_checkpoint"):
        load_init_checkpoint(other.albert, str(tmp_path / "missing"))
