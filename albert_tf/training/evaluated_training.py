"""Fine-tuning that evaluates on a schedule and keeps the best weights, for any task and dev metric.

Unlike the original (which evaluated every saved checkpoint in an endless loop), evaluation runs
inside training every `eval_every` steps, the best weights are written to `<output_dir>/best/`
with their metrics in `best_metrics.json` (and every evaluation in `eval_history.json`, with the
mean training loss of the steps since the one before as `train_loss`; both also go to TensorBoard
under `<output_dir>/logs/{train,dev}`), and training ends after `train_steps`. The records and the
checkpoints are one state (`run_records`): a run killed between them is repaired when it resumes,
and the TensorBoard records of the steps it redoes are dropped. Training resumes from the latest checkpoint in
`<output_dir>/checkpoints/` if one exists, exactly where it stopped: the checkpoint holds the
dropout seed generators, and the training data (`albert_tf.training.training_order`) skips the batches
already used. GLUE (`albert_tf.glue.training`), SQuAD and RACE use it with their own evaluation
(`evaluate_fn(model) -> metrics`).
"""

import math
import os

import keras
from absl import logging

from albert_tf.checkpoints import BEST_CHECKPOINT_PREFIX, TRAINING_CHECKPOINT_DIR
from albert_tf.training.determinism import dropout_seed_states
from albert_tf.error_text import SettingError, TrainingDiverged
from albert_tf.training.checkpoint_saving import remove_checkpoint_partials, save_checkpoint
from albert_tf.pretraining.metrics_rollback import drop_records_after
from albert_tf.progress import LONG_WORK_INTERVAL, Progress
from albert_tf.training import run_checkpoints, run_records
from albert_tf.training.resume_check import mismatches
from albert_tf.training.start_line import start_line
from albert_tf.training.tensorboard_log import TensorBoardLog

BEST_METRICS_FILE = run_records.BEST_METRICS_FILE
EVAL_HISTORY_FILE = run_records.EVAL_HISTORY_FILE
read_best_metrics = run_records.read_best_metrics
# The key of an `eval_history.json` record that is not a dev metric.
TRAIN_LOSS_KEY = "train_loss"


def best_checkpoint_prefix(output_dir):
    return os.path.join(output_dir, BEST_CHECKPOINT_PREFIX)


def start_message(output_dir, train_steps, steps_setting):
    """One line for the commands to say before training: what `output_dir` holds and what
    `fine_tune` will do with it (`steps_setting` names where `train_steps` comes from)."""
    latest = run_checkpoints.for_this_backend().latest(os.path.join(output_dir, TRAINING_CHECKPOINT_DIR))
    step = None if latest is None else int(latest.rsplit("-", 1)[1])  # saved as ckpt-<step>
    return start_line("fine-tuning", output_dir, latest, step, train_steps, steps_setting)


def best_model_text(output_dir, selection_metric):
    """Which weights `restore_best` reads, for the commands to say what they evaluate or export."""
    best = read_best_metrics(output_dir, selection_metric)
    return (f"the best fine-tuned model {best_checkpoint_prefix(output_dir)} (step {best['step']}, "
            f"dev {selection_metric}={best['metrics'][selection_metric]:.4f})")


def restore_best(model, output_dir):
    """Reads the best weights of `output_dir` into `model`; a `best/` that is damaged, of another
    model, or of another step than `best_metrics.json` names is a SettingError naming it."""
    prefix = best_checkpoint_prefix(output_dir)
    checkpoints = run_checkpoints.holding(prefix)
    damage = checkpoints.damaged(prefix)
    if damage is not None:
        raise SettingError("{output_dir} {directory}: its best model {prefix} is damaged ({damage}); run again "
                           "with {do_train} to resume training, or use another {output_dir}",
                           directory=output_dir, prefix=prefix, damage=damage)
    problems = mismatches(prefix, model)
    if problems:
        raise SettingError("{output_dir} {directory}: its best model {prefix} does not fit this task and "
                           "config ({problems}); use the task and {albert_config_file} it was trained "
                           "with, or another {output_dir}", directory=output_dir, prefix=prefix, problems=problems)
    best, held = read_best_metrics(output_dir), checkpoints.best_step(prefix)
    if held is not None and (best is None or best["step"] != held):
        raise SettingError("{output_dir} {directory}: {path} names step {named}, but {prefix} holds step {held} "
                           "(a run stopped between the two): run again with {do_train} to repair them",
                           directory=output_dir, path=os.path.join(output_dir, BEST_METRICS_FILE),
                           named=best and best["step"], prefix=prefix, held=held)
    checkpoints.read_weights(model, prefix)


class EvaluateAndKeepBest(keras.callbacks.Callback):
    """Every epoch (`eval_every` steps): evaluate, checkpoint, keep the best by `selection_metric`
    (higher is better); `manager` writes the training checkpoints, `best_checkpoint` the best weights,
    both with `records` (`run_records.EvalRecords`).

    Written in this order, so that a kill at any point leaves a state `run_records.repair` makes
    whole: the training checkpoint with the records (the commit), then `best/` with them, then the
    JSON copies."""

    def __init__(self, evaluate_fn, selection_metric, manager, best_checkpoint, records, train_steps, output_dir):
        super().__init__()
        self.evaluate_fn = evaluate_fn
        self.selection_metric = selection_metric
        self.records = records
        self.best_checkpoint = best_checkpoint
        self.manager = manager
        self.train_steps = train_steps
        self.output_dir = output_dir
        self.tensorboard = TensorBoardLog(output_dir)
        self.progress = None

    def _step(self):
        return int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))

    def on_train_begin(self, logs=None):
        self.progress = Progress("fine-tuning", total=self.train_steps, unit="steps", interval=LONG_WORK_INTERVAL)
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
        metrics = self.evaluate_fn(self.model)
        if not all(math.isfinite(value) for value in metrics.values() if isinstance(value, float)):
            self._diverged(f"non-finite dev metrics at step {step}: {metrics}")
        train_loss = float(logs["loss"])  # Keras' mean over this epoch's steps: those since the last evaluation
        records = self.records
        records.history.append({"step": step, TRAIN_LOSS_KEY: train_loss, **metrics})
        score = metrics[self.selection_metric]
        improved = records.best is None or score > records.best["metrics"][self.selection_metric]
        if improved:
            records.best = {"step": step, "metrics": metrics}
        self.tensorboard.write("train", step, {"loss": train_loss})
        self.tensorboard.write("dev", step, {name: value for name, value in metrics.items()
                                             if isinstance(value, (int, float)) and not isinstance(value, bool)})
        save_checkpoint(self.manager, step)
        logging.info("step %d: %s", step, ", ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
        if improved:
            self.best_checkpoint.write(best_checkpoint_prefix(self.output_dir))
        run_records.write_files(self.output_dir, records)

    def on_train_end(self, logs=None):
        self.progress.close()
        self.tensorboard.close()

    def _diverged(self, reason):
        self.progress.close()
        self.tensorboard.close()
        raise TrainingDiverged(
            "{reason}; stopped without saving. Last good checkpoint: {latest}. Lower {learning_rate}, raise "
            "{warmup_step} or check the data (labels), then rerun to resume from it.",
            reason=reason, latest=self.manager.latest_checkpoint or "none")


def fine_tune(model, optimizer, train_dataset, evaluate_fn, selection_metric, train_steps, eval_every, output_dir,
              keep_checkpoint_max=5, jit_compile=False, loss=None, saved_model=None):
    """Trains `model` (its own `compute_loss`, or `loss`) for `train_steps`; returns the best record.

    Call under the strategy's scope (the model and optimizer must be built in it).
    `train_dataset` repeats and gives the same batches in the same order each time it is
    iterated (`training_order.shuffled_repeats`), so that a resumed run skips the ones already
    trained on. `saved_model`
    (default `model`) is what the checkpoints hold, e.g. the task model behind a `fit` wrapper.
    Returns {"step", "metrics"} of the best evaluation; the weights are left at the last step
    (`restore_best` reads the best ones).
    """
    saved_model = saved_model or model
    remove_checkpoint_partials(os.path.join(output_dir, TRAINING_CHECKPOINT_DIR))
    model.compile(optimizer=optimizer, loss=loss, jit_compile=jit_compile)
    optimizer.build(model.trainable_variables)
    state = dict(model=saved_model, optimizer=optimizer, dropout_seeds=dropout_seed_states(saved_model))
    records = run_records.EvalRecords()
    checkpoints = run_checkpoints.for_this_backend()
    manager = checkpoints.manager(state, records, os.path.join(output_dir, TRAINING_CHECKPOINT_DIR),
                                  keep_checkpoint_max)
    checkpoints.check_resumable(manager.directory, saved_model)
    latest = manager.latest_checkpoint
    stored = checkpoints.restore(manager, state, latest) if latest else None
    resume_callbacks = checkpoints.resume_callbacks() if latest else []
    done_steps = int(keras.ops.convert_to_numpy(optimizer.iterations))
    best_checkpoint = checkpoints.best_checkpoint(saved_model, records)
    if stored is None:  # a fresh run, or an older one: its JSON files are its records
        records.best = read_best_metrics(output_dir, selection_metric)
        records.history = run_records.read_history(output_dir)
    else:
        repaired = run_records.repair(output_dir, records, done_steps, best_checkpoint_prefix(output_dir),
                                      lambda: best_checkpoint.write(best_checkpoint_prefix(output_dir)), checkpoints)
        if repaired:
            logging.warning("%s: rewrote %s from %s (a run stopped before writing them)", output_dir,
                            ", ".join(repaired), latest)
    if latest:
        drop_records_after(output_dir, done_steps)  # TensorBoard's, of the steps after it: trained again
    callback = EvaluateAndKeepBest(evaluate_fn, selection_metric, manager, best_checkpoint, records, train_steps,
                                   output_dir)
    if done_steps < train_steps:
        model.fit(train_dataset.skip(done_steps), epochs=math.ceil(train_steps / eval_every),
                  initial_epoch=done_steps // eval_every,
                  steps_per_epoch=eval_every, callbacks=[callback, *resume_callbacks], verbose=0,
                  shuffle=False)  # the dataset shuffles itself
    return records.best
