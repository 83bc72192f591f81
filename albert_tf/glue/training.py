"""Fine-tuning with evaluation on a schedule: keeps the best checkpoint by the task's metric, then stops.

Unlike the original (which evaluated every saved checkpoint in an endless loop), evaluation runs
inside training every `eval_every` steps, the best weights are written to `<output_dir>/best/`
with their metrics in `best_metrics.json`, and training ends after `train_steps`. Training
resumes from the latest checkpoint in `<output_dir>/checkpoints/` if one exists.
"""

import collections
import json
import math
import os

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.checkpoint_formats import BEST_CHECKPOINT_PREFIX, TRAINING_CHECKPOINT_DIR
from albert_tf.glue.metrics import task_metrics
from albert_tf.io_utils import remove_checkpoint_partials, write_json
from albert_tf.optimization import create_optimizer
from albert_tf.progress import Progress
from albert_tf.resume_check import cannot_resume, check_resumable, mismatches

EvalSet = collections.namedtuple("EvalSet", ["prefix", "dataset", "labels"])
EvalSet.__doc__ = """A dev split: metric-name prefix ("" or "mismatched_"), its dataset, its labels."""

class FineTuningDiverged(RuntimeError):
    """The loss or the selection metric became NaN or infinite; nothing after it was saved."""


BEST_METRICS_FILE = "best_metrics.json"
EVAL_HISTORY_FILE = "eval_history.json"


def logits_model(classifier):
    """The classifier with only its `logits` output, for `fit` and `predict` (weights shared)."""
    return keras.Model(classifier.input, classifier.output["logits"], name="logits_model")


def predict_logits(model, dataset):
    """Logits [N, num_labels] of a (features, label) dataset, in dataset order."""
    return model.predict(dataset.map(lambda features, label: features), verbose=0)


def evaluate(task, model, eval_sets):
    """The task's metrics on every dev split, names prefixed ("mismatched_accuracy" for MNLI-mm)."""
    results = {}
    for eval_set in eval_sets:
        metrics = task_metrics(task, eval_set.labels, predict_logits(model, eval_set.dataset))
        results.update({eval_set.prefix + name: value for name, value in metrics.items()})
    return results


def best_checkpoint_prefix(output_dir):
    return os.path.join(output_dir, BEST_CHECKPOINT_PREFIX)


def read_best_metrics(output_dir):
    path = os.path.join(output_dir, BEST_METRICS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "r") as handle:
        return json.load(handle)


class EvaluateAndKeepBest(keras.callbacks.Callback):
    """After each `eval_every` steps: evaluate, save a checkpoint, keep the best; stop at the end."""

    def __init__(self, task, eval_sets, classifier, manager, train_steps, output_dir):
        super().__init__()
        self.task = task
        self.eval_sets = eval_sets
        self.best_checkpoint = tf.train.Checkpoint(model=classifier)
        self.manager = manager
        self.train_steps = train_steps
        self.output_dir = output_dir
        self.best = read_best_metrics(output_dir)
        history_path = os.path.join(output_dir, EVAL_HISTORY_FILE)
        self.history = []
        if tf.io.gfile.exists(history_path):
            with tf.io.gfile.GFile(history_path, "r") as handle:
                self.history = json.load(handle)
        self.progress = None

    def _step(self):
        return int(self.model.optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        self.progress = Progress("fine-tuning", total=self.train_steps, unit="steps")
        self.progress.done = self._step()

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        self.progress.update(extra=f"loss={float(loss):.4f}" if loss is not None else "")
        if loss is not None and not math.isfinite(float(loss)):
            self._diverged(f"non-finite loss ({float(loss)}) at step {self._step()}")
        if self._step() >= self.train_steps:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        step = self._step()
        metrics = evaluate(self.task, self.model, self.eval_sets)
        if not all(math.isfinite(value) for value in metrics.values()):
            self._diverged(f"non-finite dev metrics at step {step}: {metrics}")
        self.history.append({"step": step, **metrics})
        self.manager.save(checkpoint_number=step)
        logging.info("step %d: %s", step, ", ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
        score = metrics[self.task.selection_metric]
        if self.best is None or score > self.best["metrics"][self.task.selection_metric]:
            self.best_checkpoint.write(best_checkpoint_prefix(self.output_dir))
            self.best = {"step": step, "metrics": metrics}
            write_json(os.path.join(self.output_dir, BEST_METRICS_FILE), self.best)
        write_json(os.path.join(self.output_dir, EVAL_HISTORY_FILE), self.history)

    def on_train_end(self, logs=None):
        self.progress.close()

    def _diverged(self, reason):
        self.progress.close()
        raise FineTuningDiverged(
            f"{reason}; stopped without saving. Last good checkpoint: "
            f"{self.manager.latest_checkpoint or 'none'}. Lower --learning_rate, raise --warmup_step or "
            "check the data (labels), then rerun to resume from it.")


def task_loss(task):
    if task.is_regression:
        return keras.losses.MeanSquaredError()
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def build_optimizer(name, learning_rate, train_steps, warmup_steps, mixed_precision=None):
    """The original's fine-tuning optimizer: weight decay 0.01, global-norm clip 1.0, linear decay."""
    optimizer = create_optimizer(
        name, learning_rate, num_train_steps=train_steps, num_warmup_steps=warmup_steps,
        global_clipnorm=1.0,
    )
    if mixed_precision == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def fine_tune(task, classifier, optimizer, train_dataset, eval_sets, train_steps, eval_every,
              output_dir, keep_checkpoint_max=5, jit_compile=False):
    """Trains `classifier` for `train_steps`, evaluating every `eval_every`; returns the best record.

    Call under the strategy's scope (the classifier and optimizer must be built in it).
    Returns {"step": best step, "metrics": its dev metrics}; the weights are left at the last step
    (restore `best_checkpoint_prefix(output_dir)` for the best ones).
    """
    remove_checkpoint_partials(os.path.join(output_dir, TRAINING_CHECKPOINT_DIR))
    model = logits_model(classifier)
    model.compile(optimizer=optimizer, loss=task_loss(task), jit_compile=jit_compile)
    optimizer.build(model.trainable_variables)
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=classifier, optimizer=optimizer),
        os.path.join(output_dir, TRAINING_CHECKPOINT_DIR),
        max_to_keep=keep_checkpoint_max,
    )
    check_resumable(manager.directory, classifier)
    if manager.latest_checkpoint:
        try:
            manager.checkpoint.read(manager.latest_checkpoint).assert_existing_objects_matched()
        except (AssertionError, ValueError, tf.errors.OpError, IndexError) as error:
            raise ValueError(cannot_resume(manager.directory, error)) from None
        logging.info("resumed from %s", manager.latest_checkpoint)
    done_steps = int(optimizer.iterations.numpy())
    callback = EvaluateAndKeepBest(task, eval_sets, classifier, manager, train_steps, output_dir)
    if done_steps < train_steps:
        model.fit(
            train_dataset,
            epochs=math.ceil(train_steps / eval_every),
            initial_epoch=done_steps // eval_every,
            steps_per_epoch=eval_every,
            callbacks=[callback],
            verbose=0,
        )
    return callback.best


def restore_best(classifier, output_dir):
    prefix = best_checkpoint_prefix(output_dir)
    problems = mismatches(prefix, classifier)
    if problems:
        raise ValueError(f"--output_dir {output_dir}: its best model {prefix} does not fit this task and "
                         f"config ({problems}); use the --task_name and --albert_config_file it was trained "
                         "with, or another --output_dir")
    tf.train.Checkpoint(model=classifier).read(prefix).expect_partial()


def summarize_seeds(task, records):
    """Mean, standard deviation and best of each dev metric over seeds (records from `fine_tune`)."""
    summary = {}
    for name in records[0]["metrics"]:
        values = np.array([record["metrics"][name] for record in records], np.float64)
        summary[name] = {"mean": float(values.mean()), "std": float(values.std()),
                         "best": float(values.min() if name == "mse" else values.max())}
    summary["num_seeds"] = len(records)
    summary["selection_metric"] = task.selection_metric
    return summary
