"""`PretrainingRun`: a trainer plus everything around the loop that makes a run survive.

Checkpoints hold the model, the optimizer (its step is the global step), the loss scale, the
count of batches drawn and the dropout seed generators (the trainer's `checkpoint_manager`:
TensorFlow's on TensorFlow, portable ones on JAX and PyTorch); input iterators cannot be checkpointed, so a restarted run
rebuilds the (seeded, deterministic) input pipeline and skips the batches already trained on:
it continues with the very next batch, on any strategy and backend. SIGTERM saves and
stops at the next loop boundary (one that lands during a save stops the run right after it, before
any evaluation). A non-finite loss stops the run without saving (the skipped
update left the weights good, but the last checkpoint is the known-good state to resume from).
"""

import json
import math
import os
import time

import tensorflow as tf

from albert_tf.io_utils import atomic_open
from albert_tf.training.checkpoint_saving import save_checkpoint
from albert_tf.pretraining.metrics_log import MetricsLog, best_eval_record, read_metrics
from albert_tf.pretraining.preemption import StopRequest
from albert_tf.error_text import TrainingDiverged
from albert_tf.progress import Progress
from albert_tf.sigterm import on_sigterm


def loop_steps(step, total_steps, periods):
    """Steps from `step` to the next multiple of any of `periods` (or to `total_steps`): loops end
    on the multiples, so checkpoints and evaluations do too, whichever step a run resumed at."""
    return min([total_steps - step] + [period - step % period for period in periods])


class PretrainingRun:
    """Restores the latest checkpoint of `output_dir` on creation (`restored_step`: its step,
    None for a fresh run), then `train()` to `num_train_steps` and/or `evaluate()`."""

    def __init__(self, trainer, output_dir, train_dataset_fn, save_checkpoints_steps, keep_checkpoint_max, iterations_per_loop):
        """`train_dataset_fn(input_context)` gives one input pipeline's per-replica batches (the
        same order on every call); None when only evaluating."""
        self.trainer = trainer
        self.output_dir = output_dir
        self.save_checkpoints_steps = save_checkpoints_steps
        self.iterations_per_loop = iterations_per_loop
        self.log = MetricsLog(output_dir, enabled=trainer.is_chief)
        tf.io.gfile.makedirs(output_dir)
        self.manager = trainer.checkpoint_manager(output_dir, keep_checkpoint_max)
        self.restored_step = None
        if self.manager.latest_checkpoint:
            trainer.restore(self.manager, self.manager.latest_checkpoint)
            self.restored_step = trainer.step
        self.train_iterator = None
        if train_dataset_fn is not None:
            self.train_iterator = trainer.batches(train_dataset_fn, skip=trainer.batches_drawn())

    def train(self, evaluate=None, eval_every_steps=None):
        """Trains to `num_train_steps`; returns {"step", "stopped_by", "examples_per_second", ...}.

        Checkpoints come at the multiples of `save_checkpoints_steps`, and `evaluate()` (held-out
        evaluation, logged) at those of `eval_every_steps` (default: at each checkpoint), both also
        at the last step, so that overfitting shows while it happens; a resumed run keeps the same
        steps. Raises `TrainingDiverged` on a non-finite loss (no checkpoint is written after it).
        """
        stop = StopRequest()
        with on_sigterm(stop.handle):
            return self._train(stop, evaluate, eval_every_steps)

    def _train(self, stop, evaluate, eval_every_steps):
        trainer = self.trainer
        total_steps = trainer.settings.num_train_steps
        batch_size = trainer.settings.train_batch_size
        start_step = last_saved = trainer.step
        eval_every_steps = eval_every_steps or self.save_checkpoints_steps
        periods = [self.iterations_per_loop, self.save_checkpoints_steps] + ([eval_every_steps] if evaluate else [])
        progress = Progress("pretraining", total=max(total_steps - start_step, 0), unit="steps")
        timed_steps, timed_seconds = 0, 0.0
        stopped_by = None
        while trainer.step < total_steps:
            step_before = trainer.step
            started = time.monotonic()
            steps = loop_steps(step_before, total_steps, periods)
            trainer.train_loop(self.train_iterator, steps)
            values = trainer.train_metrics.result()
            trainer.train_metrics.reset()
            elapsed = time.monotonic() - started
            done = trainer.step - step_before
            if step_before > start_step:  # the first loop includes tracing and compilation
                timed_steps, timed_seconds = timed_steps + done, timed_seconds + elapsed
            values.update(
                learning_rate=trainer.learning_rate(),
                steps_per_second=done / elapsed,
                examples_per_second=done * batch_size / elapsed,
            )
            self.log.write("train", trainer.step, values)
            self._check_finite(values, step_before, step_before + steps, last_saved, done)
            progress.update(done, extra=f"step {trainer.step}, loss {values['loss']:.4f}, "
                                        f"mlm_acc {values['masked_lm_accuracy']:.4f}, {values['examples_per_second']:.1f} examples/s")
            if trainer.step >= total_steps or trainer.step % self.save_checkpoints_steps == 0:
                save_checkpoint(self.manager, trainer.step)
                last_saved = trainer.step
            stopped_by = stop.signal_name if stop.requested(trainer.strategy) else None  # also one during the save
            if stopped_by:
                if last_saved != trainer.step:
                    save_checkpoint(self.manager, trainer.step)
                break
            if evaluate is not None and (trainer.step >= total_steps or trainer.step % eval_every_steps == 0):
                evaluate()
        progress.close()
        rate = timed_steps * batch_size / timed_seconds if timed_seconds else None
        return {"step": trainer.step, "stopped_by": stopped_by,
                "examples_per_second": rate, "checkpoint": self.manager.latest_checkpoint}

    def _check_finite(self, values, step_before, step_end, last_saved, done):
        if math.isfinite(values["loss"]) and done > 0:
            return
        reason = f"non-finite loss ({values['loss']})" if not math.isfinite(values["loss"]) else "non-finite gradients on every step"
        latest = self.manager.latest_checkpoint
        raise TrainingDiverged(
            "{reason} between steps {start} and {end}; stopped without saving. Last good checkpoint: {latest} "
            "(step {last_saved}). Lower {learning_rate}, raise {num_warmup_steps} or check the data, then rerun "
            "to resume from it.", reason=reason, start=step_before, end=step_end,
            latest=latest or "none", last_saved=last_saved)

    def evaluate(self, dataset, max_steps, global_batch_size):
        values = self.trainer.evaluate(dataset, max_steps, global_batch_size)
        self.log.write("eval", self.trainer.step, values)
        return values

    def write_summary(self, summary, name):
        """Adds the first and last training records of metrics.jsonl and the held-out record of
        lowest loss (`eval_best`, its step `best_eval_step`), then writes `name` (JSON)."""
        records = read_metrics(self.output_dir)
        train_records = [record for record in records if record["split"] == "train"]
        if train_records:
            summary["train_first"] = train_records[0]
            summary["train_last"] = train_records[-1]
        best = best_eval_record(records)
        if best is not None:
            summary["eval_best"] = best
            summary["best_eval_step"] = best["step"]
        summary["final_step"] = self.trainer.step
        if self.trainer.is_chief:
            with atomic_open(os.path.join(self.output_dir, name)) as handle:
                handle.write(json.dumps(summary, indent=2) + "\n")
        self.log.close()
        return summary
