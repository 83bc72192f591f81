"""`KerasPretrainingTrainer.evaluate` (JAX and PyTorch's held-out numbers) averages over every
batch, as `PretrainingTrainer` does on TensorFlow; Keras' `test_on_batch` alone gives the last one's."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import pretraining_test_data as data
from albert_tf import AlbertConfig
from albert_tf.pretraining.keras_trainer import KerasPretrainingTrainer
from albert_tf.pretraining.trainer import TrainerSettings

BATCH, SEQ, PREDICTIONS = 4, 16, 3


def batch(rng, sentence_order_label, masked):
    weights = np.zeros((BATCH, PREDICTIONS), np.float32)
    weights[:, :masked] = 1.0  # the batches weigh differently in the masked-LM means
    return {"input_word_ids": rng.integers(5, 60, (BATCH, SEQ)).astype(np.int32),
            "input_mask": np.ones((BATCH, SEQ), np.int32), "input_type_ids": np.zeros((BATCH, SEQ), np.int32),
            "masked_lm_positions": np.tile(np.arange(1, PREDICTIONS + 1), (BATCH, 1)).astype(np.int32),
            "masked_lm_ids": rng.integers(5, 60, (BATCH, PREDICTIONS)).astype(np.int32),
            "masked_lm_weights": weights,
            "next_sentence_labels": np.full((BATCH, 1), sentence_order_label, np.int32)}


def test_the_held_out_metrics_are_the_means_over_every_batch_not_the_last_one():
    keras.utils.set_random_seed(0)
    trainer = KerasPretrainingTrainer(AlbertConfig.from_dict(data.TEST_CONFIG),
                                      TrainerSettings(train_batch_size=BATCH, num_train_steps=2))
    rng = np.random.default_rng(0)
    batches = [batch(rng, 0, 1), batch(rng, 1, 3)]
    correct = {"masked_lm": [], "sentence_order": []}
    weights = []
    for features in batches:
        outputs = trainer.model({name: features[name] for name in ("input_word_ids", "input_mask", "input_type_ids",
                                                                   "masked_lm_positions")})
        mlm = np.argmax(keras.ops.convert_to_numpy(outputs["mlm_logits"]), -1) == features["masked_lm_ids"]
        correct["masked_lm"].append((mlm * features["masked_lm_weights"]).sum())
        weights.append(features["masked_lm_weights"].sum())
        correct["sentence_order"].append(
            (np.argmax(keras.ops.convert_to_numpy(outputs["sop_logits"]), -1) == features["next_sentence_labels"][:, 0]).mean())
    dataset = tf.data.Dataset.from_tensor_slices({name: np.stack([b[name] for b in batches]) for name in batches[0]})
    results = trainer.evaluate(dataset, max_steps=10, global_batch_size=BATCH)
    assert results["eval_steps"] == 2
    assert results["masked_lm_accuracy"] == pytest.approx(sum(correct["masked_lm"]) / sum(weights))
    assert results["sentence_order_accuracy"] == pytest.approx(np.mean(correct["sentence_order"]))
    # The last batch alone (what Keras' test_on_batch reports) would give another value.
    assert correct["sentence_order"][0] != correct["sentence_order"][1]
    assert results["loss"] == pytest.approx(results["masked_lm_loss"] + results["sentence_order_loss"])


def test_the_training_metrics_of_a_loop_are_the_means_over_its_steps_not_the_last_one():
    """The run logs `train_metrics` once per loop: over every step of it, as on TensorFlow. Each
    step's accuracy is its forward pass's, before its update (no dropout in the test model)."""
    keras.utils.set_random_seed(0)
    trainer = KerasPretrainingTrainer(AlbertConfig.from_dict(data.TEST_CONFIG),
                                      TrainerSettings(train_batch_size=BATCH, num_train_steps=2))
    rng = np.random.default_rng(0)
    inputs = ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions")
    targets = ("masked_lm_ids", "masked_lm_weights", "next_sentence_labels")
    accuracies = []
    for features in [batch(rng, 0, 1), batch(rng, 1, 3)]:
        outputs = trainer.model({name: features[name] for name in inputs})
        predicted = np.argmax(keras.ops.convert_to_numpy(outputs["sop_logits"]), -1)
        accuracies.append((predicted == features["next_sentence_labels"][:, 0]).mean())
        trainer.train_loop(iter([({name: features[name] for name in inputs},
                                  {name: features[name] for name in targets})]), 1)
    assert trainer.step == 2 and accuracies[0] != accuracies[1]  # so that the last step alone would differ
    assert trainer.train_metrics.result()["sentence_order_accuracy"] == pytest.approx(np.mean(accuracies))
    trainer.train_metrics.reset()
    assert trainer.train_metrics.weights == {"masked_lm": 0.0, "sentence_order": 0.0}
