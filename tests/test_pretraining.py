"""The pretraining loss and step: global-batch semantics, gradient accumulation, replicas."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.pretraining.losses import pretraining_losses
from pretraining_test_data import REPO_ROOT, train_in_process, write_random_records


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return write_random_records(str(tmp_path_factory.mktemp("records") / "train.tfrecord"), 128)


def random_batch(rng, batch, predictions=3, vocab=11):
    weights = (rng.random((batch, predictions)) < 0.7).astype(np.float32)
    features = {
        "masked_lm_ids": tf.constant(rng.integers(0, vocab, (batch, predictions)), tf.int32),
        "masked_lm_weights": tf.constant(weights),
        "next_sentence_labels": tf.constant(rng.integers(0, 2, batch), tf.int32),
    }
    outputs = {
        "mlm_logits": tf.constant(rng.normal(size=(batch, predictions, vocab)), tf.float32),
        "sop_logits": tf.constant(rng.normal(size=(batch, 2)), tf.float32),
    }
    return features, outputs


def reference_loss(features, outputs):
    """The original's formula on one device, in numpy (reference 2.3)."""
    def log_softmax(x):
        x = x - x.max(-1, keepdims=True)
        return x - np.log(np.exp(x).sum(-1, keepdims=True))

    mlm_log_probs = log_softmax(outputs["mlm_logits"].numpy())
    ids, weights = features["masked_lm_ids"].numpy(), features["masked_lm_weights"].numpy()
    per_position = -np.take_along_axis(mlm_log_probs, ids[..., None], -1)[..., 0]
    mlm = (per_position * weights).sum() / (weights.sum() + 1e-5)
    sop_log_probs = log_softmax(outputs["sop_logits"].numpy())
    sop = -np.take_along_axis(sop_log_probs, features["next_sentence_labels"].numpy()[:, None], -1).mean()
    return mlm + sop


def test_loss_is_the_originals_and_replica_shares_add_up_to_it():
    rng = np.random.default_rng(0)
    features, outputs = random_batch(rng, batch=6)
    total_weight = tf.reduce_sum(features["masked_lm_weights"])
    whole = pretraining_losses(outputs, features, total_weight, 6).loss
    np.testing.assert_allclose(float(whole), reference_loss(features, outputs), rtol=1e-5)

    halves = [
        pretraining_losses(
            {k: v[part] for k, v in outputs.items()}, {k: v[part] for k, v in features.items()}, total_weight, 6
        ).loss
        for part in (slice(0, 3), slice(3, 6))
    ]
    np.testing.assert_allclose(float(halves[0] + halves[1]), float(whole), rtol=1e-6)


def assert_same_training(left, right):
    (left_initial, left_weights, left_metrics), (_, right_weights, right_metrics) = left, right
    # Otherwise the comparison would prove nothing.
    assert max(float(np.abs(a - b).max()) for a, b in zip(left_weights, left_initial)) > 1e-3
    assert left_metrics["masked_lm_loss"] == pytest.approx(right_metrics["masked_lm_loss"], rel=1e-5)
    assert left_metrics["sentence_order_loss"] == pytest.approx(right_metrics["sentence_order_loss"], rel=1e-5)
    for a, b in zip(left_weights, right_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_gradient_accumulation_matches_the_full_batch(records):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    full = train_in_process(strategy, records, steps=3)
    accumulated = train_in_process(strategy, records, steps=3, grad_accum_steps=2)
    assert_same_training(full, accumulated)


def test_one_device_and_two_mirrored_replicas_train_the_same_model(records, tmp_path):
    # Logical CPU devices must be set before TensorFlow starts: a fresh process.
    script = """
import sys
import numpy as np
from albert_tf.training import distribute
distribute.split_cpu(2)
import tensorflow as tf
from pretraining_test_data import train_in_process
mirrored = distribute.get_strategy("mirrored")
assert mirrored.num_replicas_in_sync == 2, mirrored.num_replicas_in_sync
for name, strategy in (("one", tf.distribute.OneDeviceStrategy("/cpu:0")), ("mirrored", mirrored)):
    initial, weights, metrics = train_in_process(strategy, sys.argv[1], steps=3)
    np.savez(sys.argv[2] + name + ".npz", *(initial + weights), **{"metric_" + k: v for k, v in metrics.items()})
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, os.path.join(REPO_ROOT, "tests")]), TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", script, records, str(tmp_path) + "/"], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    runs = []
    for name in ("one", "mirrored"):
        saved = np.load(tmp_path / f"{name}.npz")
        arrays = [saved[f"arr_{i}"] for i in range(len([k for k in saved.files if k.startswith("arr_")]))]
        metrics = {k[len("metric_"):]: float(saved[k]) for k in saved.files if k.startswith("metric_")}
        half = len(arrays) // 2
        runs.append((arrays[:half], arrays[half:], metrics))
    assert_same_training(*runs)


@pytest.mark.parametrize("precision, jit_compile", [("mixed_bfloat16", True), ("mixed_float16", False)])
def test_mixed_precision_trains_float32_weights(records, precision, jit_compile):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    _, weights, metrics = train_in_process(strategy, records, steps=2, mixed_precision=precision, jit_compile=jit_compile)
    assert all(w.dtype == np.float32 and np.isfinite(w).all() for w in weights)
    assert np.isfinite(metrics["loss"]) and metrics["masked_lm_loss"] > 0


def test_init_checkpoint_accepts_ours_and_the_originals(tmp_path):
    from albert_tf import AlbertConfig, AlbertPretrainingModel, checkpoints
    from albert_tf.pretraining.trainer import PretrainingTrainer, TrainerSettings
    from pretraining_test_data import TEST_CONFIG

    config = AlbertConfig.from_dict(TEST_CONFIG)
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    trainer = PretrainingTrainer(strategy, config, TrainerSettings(train_batch_size=2, num_train_steps=1))
    ours = tf.train.Checkpoint(**trainer.checkpoint_items()).write(str(tmp_path / "ours" / "ckpt-1"))
    source = trainer.model
    checkpoints.save_tf1_checkpoint(source, str(tmp_path / "tf1" / "model.ckpt"))
    for path, kind in ((ours, "TF2 checkpoint"), (str(tmp_path / "tf1"), "TF1 checkpoint")):
        target = AlbertPretrainingModel(config)
        report = checkpoints.load(target, path)
        assert report.format == kind and not report.missing and not report.unused
        for a, b in zip(source.get_weights(), target.get_weights()):
            np.testing.assert_array_equal(a, b)

    bigger = AlbertConfig.from_dict(dict(TEST_CONFIG, hidden_size=32))
    with pytest.raises(ValueError, match="shape mismatch"):
        checkpoints.load(AlbertPretrainingModel(bigger), ours)
