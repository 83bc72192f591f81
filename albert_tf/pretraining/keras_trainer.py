"""`KerasPretrainingTrainer`: MLM + SOP pretraining through Keras' own train step, on JAX and PyTorch.

The same model, losses, optimizers and schedule as `PretrainingTrainer` (the `tf.distribute` loop
TensorFlow keeps), and the same interface, so that `PretrainingRun` drives either one: Keras'
`train_on_batch` computes the gradients with the backend's autodiff (jitted on JAX) and applies
them with the optimizer's `global_clipnorm`. On JAX a `keras.distribution` (set before the model is
built, `keras_distribution.set_data_parallel`) shards each global batch over the devices: the loss
is computed on the whole batch in one program, so its MLM denominator and the clipped norm are the
global batch's, as `tf.distribute`'s all-reduces make them on TensorFlow.

Not here, each refused before any work by the command: gradient accumulation (Keras' accumulates
means of micro-batch losses, not the global-batch loss of the TensorFlow loop), and skipping a
step with non-finite gradients in float32 (the run stops at the loop's end instead, its last
checkpoint being the good state).
"""

import os

import keras
import numpy as np
from keras import ops

from albert_tf.models import AlbertModel, AlbertPretrainingModel
from albert_tf.pretraining.losses import pretraining_losses
from albert_tf.pretraining.metrics import METRIC_NAMES
from albert_tf.progress import LONG_WORK_INTERVAL, Progress
from albert_tf.training import keras_distribution, optimization
from albert_tf.training.portable_checkpoints import PortableCheckpoint, PortableCheckpointManager
from albert_tf.error_text import SettingError

MODEL_INPUTS = ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions")


def check_grad_accum_steps(grad_accum_steps):
    """Gradient accumulation is the TensorFlow loop's (see the module docstring): a SettingError above 1."""
    if grad_accum_steps != 1:
        raise SettingError("{grad_accum_steps} is for the TensorFlow backend only (set KERAS_BACKEND=tensorflow, "
                           "or raise the batch by adding devices)")


class PretrainingObjective(keras.Model):
    """The pretraining model with the original's loss and metrics, for Keras' train and test steps:
    inputs are the model's four, targets `masked_lm_ids`, `masked_lm_weights`, `next_sentence_labels`."""

    def __init__(self, pretraining_model, **kwargs):
        super().__init__(**kwargs)
        self.pretraining_model = pretraining_model
        self.means = [keras.metrics.Mean(name=name) for name in METRIC_NAMES]

    def call(self, inputs, training=False):
        return self.pretraining_model(inputs, training=training)

    def pretraining_losses(self, targets, outputs):
        weight_total = ops.sum(ops.cast(targets["masked_lm_weights"], "float32"))
        batch_size = ops.shape(targets["next_sentence_labels"])[0]
        return pretraining_losses(outputs, targets, weight_total, batch_size)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        del x, sample_weight, training
        return self.pretraining_losses(y, y_pred).loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        del x, sample_weight
        losses = self.pretraining_losses(y, y_pred)
        weights = y["masked_lm_weights"]
        accuracy, mlm_loss, sop_accuracy, sop_loss = self.means
        accuracy.update_state(losses.masked_lm_correct, sample_weight=weights)
        mlm_loss.update_state(losses.masked_lm_losses, sample_weight=weights)
        sop_accuracy.update_state(losses.sentence_order_correct)
        sop_loss.update_state(losses.sentence_order_losses)
        return {mean.name: mean.result() for mean in self.means}


class DrawnBatches:
    """The count of batches drawn from the input, saved in the checkpoint's `state.json`."""

    def __init__(self):
        self.value = 0

    def serialize(self):
        return str(self.value)

    def deserialize(self, text):
        self.value = int(text)


class KerasPretrainingTrainer:
    """`PretrainingTrainer`'s interface on Keras' train step; `settings` a `TrainerSettings`."""

    def __init__(self, albert_config, settings, num_replicas=1):
        check_grad_accum_steps(settings.grad_accum_steps)
        self.settings = settings
        self.num_replicas = num_replicas
        dtype = None if settings.mixed_precision == "float32" else settings.mixed_precision
        backbone = AlbertModel(albert_config, dtype=dtype, kernels=settings.kernels, recompute=settings.recompute,
                               name="albert")
        self.model = AlbertPretrainingModel(backbone=backbone)
        self.optimizer = optimization.create_optimizer(
            settings.optimizer, settings.learning_rate, num_train_steps=settings.num_train_steps,
            num_warmup_steps=settings.num_warmup_steps, start_warmup_step=settings.start_warmup_step,
            poly_power=settings.poly_power, global_clipnorm=settings.clip_norm or None)
        self.objective = PretrainingObjective(self.model)
        optimizer = self.optimizer
        if settings.mixed_precision == "mixed_float16":
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
        self.objective.compile(optimizer=optimizer, jit_compile=True if settings.jit_compile else "auto")
        self.objective.optimizer.build(self.model.trainable_variables)
        self.drawn = DrawnBatches()
        self.train_metrics = BatchMeans()  # since the last reset(): the run reads them after each loop

    @property
    def step(self):
        return int(ops.convert_to_numpy(self.optimizer.iterations))

    strategy = None  # no `tf.distribute` strategy: a SIGTERM is this process's own (`StopRequest`)

    @property
    def is_chief(self):
        return keras_distribution.is_chief()

    def batches_drawn(self):
        return self.drawn.value

    def learning_rate(self):
        return float(ops.convert_to_numpy(self.optimizer.learning_rate))

    def checkpoint_manager(self, output_dir, max_to_keep):
        """Portable checkpoints in `output_dir` (process 0; the others write theirs, unused, in
        `workertemp_<process>/`, as TensorFlow's multi-worker runs do)."""
        checkpoint = PortableCheckpoint(self.model, self.objective.optimizer, data_steps=self.drawn)
        directory = output_dir if self.is_chief else os.path.join(output_dir, f"workertemp_{keras_distribution.processes()[0]}")
        return PortableCheckpointManager(checkpoint, directory, max_to_keep)

    def restore(self, manager, path):
        manager.checkpoint.read(path)

    def batches(self, dataset_fn, skip):
        """The training batches as NumPy, from the `skip`-th on (`dataset_fn(input_context)`)."""
        return _split(self.eval_batches(dataset_fn).skip(skip).as_numpy_iterator())

    def eval_batches(self, dataset_fn):
        """`dataset_fn(input_context)` for this process: its share of each global batch."""
        import tensorflow as tf  # pylint: disable=g-import-not-at-top  (tf.data feeds every backend)

        index, count = keras_distribution.processes()
        return dataset_fn(tf.distribute.InputContext(num_input_pipelines=count, input_pipeline_id=index,
                                                     num_replicas_in_sync=count))

    def train_loop(self, iterator, num_steps):
        for _ in range(num_steps):
            inputs, targets = next(iterator)
            self.drawn.value += 1
            self.train_metrics.add(self.objective.train_on_batch(inputs, targets, return_dict=True), targets)

    def evaluate(self, dataset, max_steps, global_batch_size):
        """One pass over `dataset` (a `tf.data.Dataset` of global batches, at most `max_steps`)."""
        del global_batch_size  # the batches are global here
        steps, means = 0, BatchMeans()
        progress = Progress("evaluation", unit="batches", interval=LONG_WORK_INTERVAL)
        for inputs, targets in _split(dataset.as_numpy_iterator()):
            if steps >= max_steps:
                break
            means.add(self.objective.test_on_batch(inputs, targets, return_dict=True), targets)
            steps += 1
            progress.update()
        progress.close()
        if steps == 0:
            raise SettingError("the evaluation data holds fewer examples than one batch: lower {eval_batch_size} "
                               "or give more {eval_input_file} data")
        return dict(means.result(), eval_steps=steps)


class BatchMeans:
    """`PretrainingMetrics`' `result()` and `reset()` from Keras' per-batch logs: `train_on_batch`
    and `test_on_batch` reset the metrics at each call, so their logs are one batch's. The masked-LM
    means weigh each batch by its masked-LM weights, the sentence-order ones by its examples (as
    `PretrainingMetrics` on TensorFlow)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.sums = dict.fromkeys(METRIC_NAMES, 0.0)
        self.weights = {"masked_lm": 0.0, "sentence_order": 0.0}

    def add(self, logs, targets):
        weights = {"masked_lm": float(np.sum(targets["masked_lm_weights"])),
                   "sentence_order": float(len(targets["next_sentence_labels"]))}
        for name in METRIC_NAMES:
            self.sums[name] += float(logs[name]) * weights[_kind(name)]
        for kind, weight in weights.items():
            self.weights[kind] += weight

    def result(self):
        values = {name: total / self.weights[_kind(name)] for name, total in self.sums.items()}
        values["loss"] = values["masked_lm_loss"] + values["sentence_order_loss"]
        return values


def _kind(metric_name):
    return "masked_lm" if metric_name.startswith("masked_lm") else "sentence_order"


def _split(batches):
    for features in batches:
        inputs = {name: features[name] for name in MODEL_INPUTS}
        targets = {name: features[name] for name in ("masked_lm_ids", "masked_lm_weights", "next_sentence_labels")}
        yield inputs, targets
