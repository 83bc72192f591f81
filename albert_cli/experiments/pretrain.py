"""Pretraining one variant with the library's trainer, and its held-out MLM / sentence-pair metrics."""

import time

import keras
import numpy as np
import tensorflow as tf

from albert_tf.training.distribute import get_strategy
from albert_tf.kernels import choose
from albert_tf.pretraining.trainer import PretrainingTrainer, TrainerSettings
from albert_tf.pretraining.data import pretraining_dataset

# Steps per `train_loop` call: the host logs between calls.
STEPS_PER_LOOP = 50


def kernels_for(setup):
    return choose(setup.kernels, tf.config.list_logical_devices())


def pretrain(config, train_file, setup, log=print, trainer_class=PretrainingTrainer):
    """A `trainer_class` (a `PretrainingTrainer`) for `config`, trained `setup.train_steps` on `train_file`.

    The seed is set before the model is built and orders the data, so every variant starts from
    the same random state and sees the same batches.
    """
    keras.utils.set_random_seed(setup.seed)
    settings = TrainerSettings(
        train_batch_size=setup.train_batch_size, num_train_steps=setup.train_steps, optimizer="lamb",
        learning_rate=setup.learning_rate, num_warmup_steps=setup.train_steps // 10,
        kernels=kernels_for(setup),
    )
    trainer = trainer_class(get_strategy("one_device"), config, settings)
    dataset = pretraining_dataset(train_file, setup.max_seq_length, setup.max_predictions_per_seq,
                                  setup.train_batch_size, is_training=True, seed=setup.seed)
    iterator = iter(dataset)
    started = time.monotonic()
    while trainer.step < setup.train_steps:
        trainer.train_loop(iterator, min(STEPS_PER_LOOP, setup.train_steps - trainer.step))
        values = trainer.train_metrics.result()
        trainer.train_metrics.reset()
        log(f"  step {trainer.step}/{setup.train_steps}: loss {values['loss']:.3f} "
            f"({time.monotonic() - started:.0f}s)")
    return trainer


def heldout_metrics(trainer, heldout_file, setup):
    """MLM accuracy/loss and sentence-pair accuracy/loss on `heldout_file` (the file's labels:
    the head's accuracy on SOP data is SOP accuracy, on NSP data NSP accuracy)."""
    dataset = pretraining_dataset(heldout_file, setup.max_seq_length, setup.max_predictions_per_seq,
                                  setup.train_batch_size, is_training=False)
    return trainer.evaluate(dataset, setup.eval_batches, setup.train_batch_size)


def _heldout_batches(heldout_file, setup):
    """The batches of `heldout_file` that `heldout_metrics` reads."""
    dataset = pretraining_dataset(heldout_file, setup.max_seq_length, setup.max_predictions_per_seq,
                                  setup.train_batch_size, is_training=False)
    return list(dataset.take(setup.eval_batches))


def majority_accuracy(heldout_file, setup):
    """The sentence-pair accuracy of always answering the commoner label, on the batches that
    `heldout_metrics` reads: the real chance level (SOP data holds more 1s than 0s, since a
    one-line chunk gets a random-document segment labelled 1, as in the original)."""
    labels = [batch["next_sentence_labels"].numpy() for batch in _heldout_batches(heldout_file, setup)]
    share_of_ones = float(np.concatenate(labels).mean())
    return max(share_of_ones, 1.0 - share_of_ones)


def heldout_counts(heldout_file, setup):
    """How many masked tokens and sentence pairs `heldout_metrics` scores: the n of their error bars."""
    batches = _heldout_batches(heldout_file, setup)
    return {"masked_lm_predictions": int(sum(batch["masked_lm_weights"].numpy().sum() for batch in batches)),
            "sentence_pairs": int(sum(len(batch["next_sentence_labels"]) for batch in batches))}
