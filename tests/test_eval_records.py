"""A fine-tuning run's evaluation records and its checkpoints are one state: a run stopped at any of
its writes agrees with itself once resumed, and hand-edited or damaged records or `best/` are an
error naming the file."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.checkpoints.ours import model_weight_keys
from albert_tf.training import evaluated_training, run_records
from albert_tf.training.resume_check import checkpoint_prefixes
from test_bad_inputs import _batches, _damage, _tiny_classifier

# The dev score of each evaluated step: step 4 is the best, so that its evaluation writes everything.
SCORES = {2: 0.5, 4: 0.75, 6: 0.625}


class Killed(BaseException):
    """Stands for a kill -9: nothing after the write it interrupts runs."""


def _fine_tune(output_dir, train_steps=6):
    from albert_tf.glue import training
    from albert_tf.training.optimization import fine_tuning_optimizer

    classifier = _tiny_classifier(2)
    optimizer = fine_tuning_optimizer("adamw", 1e-3, train_steps=train_steps, warmup_steps=0)
    labels = [0.0, 1.0, 0.0, 1.0]
    return evaluated_training.fine_tune(
        training.logits_model(classifier), optimizer, _batches(labels).repeat(),
        lambda model: {"accuracy": SCORES[int(model.optimizer.iterations.numpy())]}, "accuracy", train_steps, 2,
        str(output_dir), keep_checkpoint_max=10, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        saved_model=classifier)


def _kill_at_write(monkeypatch, number, step=4):
    """Kills the run (raises Killed) in place of its `number`-th write of the evaluation at `step`:
    the training checkpoint, `best/`, `best_metrics.json`, `eval_history.json`, in the order written."""
    evaluating, writes = [None], []

    def counted(write):
        def wrapper(*args, **kwargs):
            if evaluating[0] == step:
                writes.append(args)
                if len(writes) == number:
                    raise Killed()
            return write(*args, **kwargs)
        return wrapper

    on_epoch_end = evaluated_training.EvaluateAndKeepBest.on_epoch_end

    def noting_the_step(self, epoch, logs=None):
        evaluating[0] = int(self.model.optimizer.iterations.numpy())
        return on_epoch_end(self, epoch, logs)

    monkeypatch.setattr(evaluated_training.EvaluateAndKeepBest, "on_epoch_end", noting_the_step)
    monkeypatch.setattr(evaluated_training, "save_checkpoint", counted(evaluated_training.save_checkpoint))
    monkeypatch.setattr(tf.train.Checkpoint, "write", counted(tf.train.Checkpoint.write))
    monkeypatch.setattr(run_records, "write_json", counted(run_records.write_json))
    return writes


def _model_tensors(prefix):
    """{path under `model/`: value} of the model's weights in a checkpoint."""
    reader = tf.train.load_checkpoint(prefix)
    return {path: reader.get_tensor(key) for path, key in model_weight_keys(prefix).items()}


def _assert_records_agree_with_checkpoints(output_dir):
    best = run_records.read_best_metrics(str(output_dir), "accuracy")
    history = run_records.read_history(str(output_dir))
    assert [entry["step"] for entry in history] == [2, 4, 6], history
    assert [entry["accuracy"] for entry in history] == [SCORES[2], SCORES[4], SCORES[6]]
    assert best == {"step": 4, "metrics": {"accuracy": SCORES[4]}}, best
    prefix = evaluated_training.best_checkpoint_prefix(str(output_dir))
    assert run_records.best_step(prefix) == 4
    best_weights, step_weights = _model_tensors(prefix), _model_tensors(str(output_dir / "checkpoints" / "ckpt-4"))
    assert best_weights.keys() == step_weights.keys() and best_weights
    assert all(np.array_equal(best_weights[name], step_weights[name]) for name in best_weights)
    latest = run_records.stored_records(checkpoint_prefixes(str(output_dir / "checkpoints"))[-1])
    assert (latest.best, latest.history) == (best, history)
    assert _tensorboard_steps(output_dir, "dev") == [2, 4, 6]  # each evaluation once


def _tensorboard_steps(output_dir, split):
    from tensorflow.core.util import event_pb2

    steps = []
    for path in tf.io.gfile.glob(str(output_dir / "logs" / split / "events.out.tfevents.*")):
        events = (event_pb2.Event.FromString(record.numpy()) for record in tf.data.TFRecordDataset(path))
        steps += [event.step for event in events if event.summary.value]
    return sorted(steps)


@pytest.mark.parametrize("write", [1, 2, 3, 4], ids=["checkpoint", "best", "best_metrics", "eval_history"])
def test_a_run_killed_at_any_write_of_an_evaluation_agrees_with_its_checkpoints_after_resume(
        tmp_path, monkeypatch, write):
    writes = _kill_at_write(monkeypatch, write)
    with pytest.raises(Killed):
        _fine_tune(tmp_path)
    assert len(writes) == write
    monkeypatch.undo()
    best = _fine_tune(tmp_path)
    assert best == {"step": 4, "metrics": {"accuracy": SCORES[4]}}
    _assert_records_agree_with_checkpoints(tmp_path)


def test_hand_edited_records_are_rewritten_from_the_checkpoint_on_resume(tmp_path):
    _fine_tune(tmp_path, train_steps=4)
    (tmp_path / run_records.BEST_METRICS_FILE).write_text("[]")
    (tmp_path / run_records.EVAL_HISTORY_FILE).write_text("{}")
    _fine_tune(tmp_path)
    _assert_records_agree_with_checkpoints(tmp_path)


_BAD_BEST = [("[]", "a list where an object was expected"), ('{"step": 2}', "no finite 'accuracy'"),
             ('{"step": 2, "metrics": {"accuracy": NaN}}', "no finite 'accuracy'"),
             ('{"step": "2", "metrics": {"accuracy": 1}}', "step '2', expected a step number"),
             ("{garbled", "not JSON")]
_BAD_HISTORY = [("{}", "an object where a list was expected"), ("[1]", "a number 1 where an object was expected"),
                ('[{"loss": 1}]', "step None")]


@pytest.mark.parametrize("name, content, words",
                         [(run_records.BEST_METRICS_FILE, *case) for case in _BAD_BEST]
                         + [(run_records.EVAL_HISTORY_FILE, *case) for case in _BAD_HISTORY])
def test_a_hand_edited_record_is_an_error_naming_the_file(tmp_path, name, content, words):
    (tmp_path / name).write_text(content)
    with pytest.raises(ValueError) as error:
        _fine_tune(tmp_path)  # a directory without checkpoints: its files are its records
    message = str(error.value)
    assert message.startswith(str(tmp_path / name)) and words in message and "hand-edited or damaged" in message
    assert not os.path.exists(tmp_path / "checkpoints")


@pytest.mark.parametrize("fault", ["truncated_data", "flipped_data", "garbage_index"])
def test_a_damaged_best_model_is_an_error_naming_it(tmp_path, fault):
    _fine_tune(tmp_path, train_steps=2)
    prefix = evaluated_training.best_checkpoint_prefix(str(tmp_path))
    _damage(prefix, fault)
    with pytest.raises(ValueError, match=f"its best model {prefix} is damaged"):
        evaluated_training.restore_best(_tiny_classifier(2), str(tmp_path))


def test_a_best_model_of_another_step_than_its_record_is_refused(tmp_path):
    _fine_tune(tmp_path, train_steps=4)
    (tmp_path / run_records.BEST_METRICS_FILE).write_text(json.dumps({"step": 2, "metrics": {"accuracy": 0.5}}))
    with pytest.raises(ValueError, match="best_metrics.json names step 2, but .* holds step 4"):
        evaluated_training.restore_best(_tiny_classifier(2), str(tmp_path))
