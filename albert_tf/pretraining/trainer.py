"""`PretrainingTrainer`: the custom MLM + SOP training loop on any `tf.distribute` strategy.

Model, optimizer, metrics and loss scale are built in `strategy.scope()`; data comes through
`distribute_datasets_from_function` with per-replica batches; `iterations_per_loop` steps run
inside one `tf.function` call (a `tf.range` loop, so a TPU host launches one program per loop).
The host only wakes between loops, to log, checkpoint, and honour a preemption request.
"""

import dataclasses

import tensorflow as tf

from albert_tf.training import optimization, replica_update
from albert_tf.training.determinism import dropout_seed_states
from albert_tf.training.distribute import distribute_datasets, is_chief, worker_output_dir
from albert_tf.error_text import SettingError
from albert_tf.models import AlbertModel, AlbertPretrainingModel
from albert_tf.pretraining.loss_scale import DynamicLossScale
from albert_tf.pretraining.losses import pretraining_losses
from albert_tf.pretraining.metrics import PretrainingMetrics
from albert_tf.progress import LONG_WORK_INTERVAL, Progress


@dataclasses.dataclass(frozen=True)
class TrainerSettings:
    """The numbers the loop needs (flags map onto these one to one)."""

    train_batch_size: int
    num_train_steps: int
    optimizer: str = "lamb"
    learning_rate: float = 0.00176
    num_warmup_steps: int = 0
    start_warmup_step: int = 0
    poly_power: float = 1.0
    grad_accum_steps: int = 1
    mixed_precision: str = "float32"
    jit_compile: bool = False
    clip_norm: float = 1.0
    kernels: str = "reference"  # the model's kernel set (albert_tf.kernels)
    recompute: bool = False  # AlbertModel's: recompute each block in the backward pass


class PretrainingTrainer:
    """Builds the model and the step functions for `strategy`; see `train_loop` / `evaluate`."""

    def __init__(self, strategy, albert_config, settings):
        self.strategy = strategy
        self.settings = settings
        self.num_replicas = strategy.num_replicas_in_sync
        per_replica = settings.train_batch_size // self.num_replicas
        if settings.train_batch_size % self.num_replicas or per_replica % settings.grad_accum_steps:
            raise ValueError(
                f"train_batch_size {settings.train_batch_size} must split evenly over "
                f"{self.num_replicas} replica(s) x {settings.grad_accum_steps} accumulation step(s)"
            )
        self.micro_batch_size = per_replica // settings.grad_accum_steps
        dtype = None if settings.mixed_precision == "float32" else settings.mixed_precision
        with strategy.scope():
            backbone = AlbertModel(albert_config, dtype=dtype, kernels=settings.kernels,
                                   recompute=settings.recompute, name="albert")
            self.model = AlbertPretrainingModel(backbone=backbone)
            self.optimizer = optimization.create_optimizer(
                settings.optimizer,
                settings.learning_rate,
                num_train_steps=settings.num_train_steps,
                num_warmup_steps=settings.num_warmup_steps,
                start_warmup_step=settings.start_warmup_step,
                poly_power=settings.poly_power,
            )
            self.optimizer.build(self.model.trainable_variables)
            self.train_metrics = PretrainingMetrics()
            self.eval_metrics = PretrainingMetrics()
            self.loss_scale = DynamicLossScale() if settings.mixed_precision == "mixed_float16" else None
            # Batches drawn from the input (steps skipped for non-finite gradients included).
            self.data_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="data_steps",
                                          aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
        self._train_loop = tf.function(self._train_loop_fn)
        self._eval_step = tf.function(self._eval_step_fn)
        self._gradients = tf.function(self._gradients_fn, jit_compile=settings.jit_compile)

    @property
    def step(self):
        """The global step: optimizer updates applied so far (the schedule's step)."""
        return int(self.optimizer.iterations.numpy())

    @property
    def is_chief(self):
        return is_chief(self.strategy)

    def checkpoint_items(self):
        """What a checkpoint must hold to resume exactly; the model under `model`, the layout of
        every checkpoint this package writes (`albert_tf.checkpoints.load` reads it)."""
        items = {
            "model": self.model,
            "optimizer": self.optimizer,
            "data_steps": self.data_steps,
            "dropout_seeds": dropout_seed_states(self.model),
        }
        if self.loss_scale is not None:
            items.update(self.loss_scale.checkpoint_items())
        return items

    def learning_rate(self):
        return float(self.optimizer.learning_rate)

    def batches_drawn(self):
        return int(self.data_steps.numpy())

    def checkpoint_manager(self, output_dir, max_to_keep):
        """This worker's `tf.train.CheckpointManager` of `checkpoint_items()` (`worker_output_dir`)."""
        return tf.train.CheckpointManager(tf.train.Checkpoint(**self.checkpoint_items()),
                                          worker_output_dir(output_dir, self.strategy), max_to_keep=max_to_keep,
                                          checkpoint_name="ckpt")

    def restore(self, manager, path):
        manager.checkpoint.restore(path).assert_existing_objects_matched()

    def batches(self, dataset_fn, skip):
        """An iterator of per-replica batches from `dataset_fn(input_context)`, from the `skip`-th
        global batch on (each input pipeline skips its replicas' share)."""
        def skipped(input_context):
            replicas_per_pipeline = input_context.num_replicas_in_sync // input_context.num_input_pipelines
            return dataset_fn(input_context).skip(skip * replicas_per_pipeline)

        return iter(distribute_datasets(self.strategy, skipped))

    def eval_batches(self, dataset_fn):
        """What `evaluate` reads: `dataset_fn(input_context)`'s batches over the replicas."""
        return distribute_datasets(self.strategy, dataset_fn)

    # --- Training -----------------------------------------------------------------------------

    def train_loop(self, iterator, num_steps):
        """Runs `num_steps` optimizer steps in one call; metrics accumulate in `train_metrics`."""
        self._train_loop(iterator, tf.constant(num_steps, tf.int32))

    def _train_loop_fn(self, iterator, num_steps):
        for _ in tf.range(num_steps):
            self.strategy.run(self._replica_train_step, args=(next(iterator),))
            self.data_steps.assign_add(1)

    def _replica_train_step(self, features):
        context = tf.distribute.get_replica_context()
        # The MLM denominator of the whole global batch, so that every share uses the same one.
        weight_total = context.all_reduce(tf.distribute.ReduceOp.SUM, tf.reduce_sum(features["masked_lm_weights"]))
        if self.settings.grad_accum_steps == 1:
            gradients = self._micro_batch_gradients(features, weight_total)
        else:
            gradients = self._accumulated_gradients(features, weight_total)
        if self.loss_scale is not None:
            gradients = self.loss_scale.unscale(gradients)
        global_norm = replica_update.apply_gradients_across_replicas(
            self.optimizer,
            gradients,
            self.model.trainable_variables,
            clip_norm=self.settings.clip_norm,
            skip_non_finite=True,
        )
        if self.loss_scale is not None:
            self.loss_scale.update(tf.math.is_finite(global_norm))

    def _accumulated_gradients(self, features, weight_total):
        """Sums the gradients of `grad_accum_steps` slices of this replica's batch."""
        accum = self.settings.grad_accum_steps
        stacked = {
            name: tf.reshape(value, [accum, self.micro_batch_size] + value.shape[1:].as_list())
            for name, value in features.items()
        }
        gradients = [tf.zeros_like(variable) for variable in self.model.trainable_variables]
        for index in tf.range(accum):
            micro_batch = {name: value[index] for name, value in stacked.items()}
            parts = self._micro_batch_gradients(micro_batch, weight_total)
            gradients = [total + part for total, part in zip(gradients, parts)]
        return gradients

    def _micro_batch_gradients(self, features, weight_total):
        gradients, losses = self._gradients(features, weight_total)
        self.train_metrics.update(losses, features)
        return gradients

    def _gradients_fn(self, features, weight_total):
        with tf.GradientTape() as tape:
            outputs = self.model(_model_inputs(features), training=True)
            losses = pretraining_losses(outputs, features, weight_total, self.settings.train_batch_size)
            loss = losses.loss if self.loss_scale is None else self.loss_scale.scale_loss(losses.loss)
        gradients = tape.gradient(loss, self.model.trainable_variables)
        return [tf.convert_to_tensor(gradient) for gradient in gradients], losses

    # --- Evaluation ---------------------------------------------------------------------------

    def evaluate(self, distributed_dataset, max_steps, global_batch_size):
        """One pass over `distributed_dataset` (at most `max_steps` batches); returns the metrics.
        A progress line after the first batch (past the tracing) and every 30 seconds."""
        self.eval_metrics.reset()
        steps = 0
        progress = Progress("evaluation", unit="batches", interval=LONG_WORK_INTERVAL)
        for features in distributed_dataset:
            if steps >= max_steps:
                break
            self._eval_step(features, tf.constant(global_batch_size, tf.float32))
            steps += 1
            progress.update()
        progress.close()
        if steps == 0:  # batches are full (drop_remainder): metrics of nothing would read 0.0
            raise SettingError("the evaluation data holds fewer examples than one batch of {batch}: lower "
                               "{eval_batch_size} or give more {eval_input_file} data", batch=global_batch_size)
        return dict(self.eval_metrics.result(), eval_steps=steps)

    def _eval_step_fn(self, features, global_batch_size):
        self.strategy.run(self._replica_eval_step, args=(features, global_batch_size))

    def _replica_eval_step(self, features, global_batch_size):
        context = tf.distribute.get_replica_context()
        weight_total = context.all_reduce(tf.distribute.ReduceOp.SUM, tf.reduce_sum(features["masked_lm_weights"]))
        outputs = self.model(_model_inputs(features), training=False)
        self.eval_metrics.update(pretraining_losses(outputs, features, weight_total, global_batch_size), features)


def _model_inputs(features):
    names = ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions")
    return {name: features[name] for name in names}
