"""PretrainingRun's SIGTERM handling at the loop's edges: a signal that lands while a checkpoint is
being saved stops the run there (saved, no evaluation after it), also at the last step."""

import os
import signal
import types

import pytest
import tensorflow as tf

from albert_tf.pretraining import run as run_module


class _Metrics:
    def result(self):
        return {"loss": 1.0, "masked_lm_accuracy": 0.5}

    def reset(self):
        """Nothing to reset: `result()` is the same after every loop."""


class _Trainer:
    """What PretrainingRun reads of a trainer, with a train loop that only counts steps."""

    is_chief = True

    def __init__(self, num_train_steps):
        self.strategy = tf.distribute.get_strategy()
        self.settings = types.SimpleNamespace(num_train_steps=num_train_steps, train_batch_size=2)
        self.global_step = tf.Variable(0, dtype=tf.int64)
        self.data_steps = tf.Variable(0, dtype=tf.int64)
        self.train_metrics = _Metrics()

    @property
    def step(self):
        return int(self.global_step.numpy())

    def checkpoint_manager(self, output_dir, max_to_keep):
        checkpoint = tf.train.Checkpoint(global_step=self.global_step, data_steps=self.data_steps)
        return tf.train.CheckpointManager(checkpoint, output_dir, max_to_keep=max_to_keep, checkpoint_name="ckpt")

    def batches_drawn(self):
        return int(self.data_steps.numpy())

    def train_loop(self, iterator, steps):
        del iterator
        self.global_step.assign_add(steps)

    def learning_rate(self):
        return 0.1


@pytest.mark.parametrize("num_train_steps, signalled_at", [(8, 4), (8, 8)], ids=["a middle save", "the last save"])
def test_a_sigterm_during_a_save_stops_before_the_evaluation(tmp_path, monkeypatch, num_train_steps, signalled_at):
    saved = []

    def save_and_be_signalled(manager, step):
        saved.append(step)
        manager.save(checkpoint_number=step)
        if step == signalled_at:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(run_module, "save_checkpoint", save_and_be_signalled)
    run = run_module.PretrainingRun(_Trainer(num_train_steps), str(tmp_path), None, save_checkpoints_steps=4,
                                    keep_checkpoint_max=3, iterations_per_loop=2)
    evaluated = []
    outcome = run.train(evaluate=lambda: evaluated.append(run.trainer.step), eval_every_steps=4)
    assert outcome["stopped_by"] == "SIGTERM" and outcome["step"] == signalled_at
    assert saved == list(range(4, signalled_at + 1, 4))
    assert evaluated == list(range(4, signalled_at, 4))  # none at or after the signalled save
    assert outcome["checkpoint"].endswith(f"ckpt-{signalled_at}")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handed back
