"""Fine-tuning's record of its training loss: in `eval_history.json`, in TensorBoard beside the dev
metrics, and in `fine_tuning_curves.png` (on a model whose batch losses are known in advance)."""

import glob
import json

import keras
import matplotlib.figure
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2

from albert_cli.plot_metrics import plot_metrics
from albert_tf.training.evaluated_training import fine_tune

FEATURES = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
TARGETS = np.zeros_like(FEATURES)


def _model():
    return keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")])


def _events(output_dir, split):
    """{tag: [(step, value)]} of the TensorBoard files of `split`."""
    values = {}
    for path in glob.glob(f"{output_dir}/logs/{split}/events.out.tfevents.*"):
        for record in tf.data.TFRecordDataset(path):
            event = event_pb2.Event.FromString(record.numpy())
            for value in event.summary.value:
                values.setdefault(value.tag, []).append((event.step, float(tf.make_ndarray(value.tensor))))
    return values


@pytest.fixture(scope="module")
def tuned_dir(tmp_path_factory):
    """4 steps of one example each, learning rate 0: every batch's loss is (x - y)^2 of fixed weights."""
    output_dir = str(tmp_path_factory.mktemp("fine_tuning"))
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, TARGETS)).batch(1).repeat()
    evaluations = iter([0.25, 0.75])
    fine_tune(_model(), keras.optimizers.SGD(learning_rate=0.0), dataset, lambda model: {"accuracy": next(evaluations)},
              "accuracy", train_steps=4, eval_every=2, output_dir=output_dir, loss="mse")
    return output_dir


BATCH_LOSSES = ((FEATURES - TARGETS) ** 2).ravel()  # 1, 4, 9, 16
# The steps since the last evaluation: 2.5, then 12.5 (not 7.5, the mean since the start).
EXPECTED_TRAIN_LOSS = [(2, BATCH_LOSSES[:2].mean()), (4, BATCH_LOSSES[2:].mean())]


def test_the_history_holds_the_mean_training_loss_since_the_last_evaluation(tuned_dir):
    with open(f"{tuned_dir}/eval_history.json") as handle:
        history = json.load(handle)
    assert [(record["step"], record["train_loss"]) for record in history] == pytest.approx(EXPECTED_TRAIN_LOSS)
    assert [record["accuracy"] for record in history] == [0.25, 0.75]


def test_tensorboard_shows_the_training_loss_beside_the_dev_metrics(tuned_dir):
    assert _events(tuned_dir, "train") == {"loss": pytest.approx(EXPECTED_TRAIN_LOSS)}
    assert _events(tuned_dir, "dev") == {"accuracy": [(2, 0.25), (4, 0.75)]}


def test_the_figure_draws_the_training_loss_first(tuned_dir, monkeypatch):
    saved = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda figure, path, **kwargs: saved.append(figure))
    plot_metrics(tuned_dir)
    (figure,) = saved
    assert [axis.get_title() for axis in figure.axes] == ["training loss (mean since the last evaluation)",
                                                          "dev accuracy"]
    (line,) = figure.axes[0].get_lines()
    assert list(zip(line.get_xdata(), line.get_ydata())) == pytest.approx(EXPECTED_TRAIN_LOSS)


def test_the_progress_line_prints_every_30_seconds_not_every_step(tmp_path, monkeypatch, capsys):
    """On a clock that moves 1 s per reading, 60 steps print a line after the first step, one or
    two on the way and the last: not one a step (982 lines in a 20-minute run before)."""
    clock = iter(range(10**6))
    monkeypatch.setattr("albert_tf.progress.time.monotonic", lambda: float(next(clock)))
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, TARGETS)).batch(1).repeat()
    fine_tune(_model(), keras.optimizers.SGD(learning_rate=0.0), dataset, lambda model: {"accuracy": 0.5},
              "accuracy", train_steps=60, eval_every=60, output_dir=str(tmp_path), loss="mse")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("fine-tuning: ")]
    assert lines[0].startswith("fine-tuning: 1/60 steps") and lines[-1].startswith("fine-tuning: 60/60 steps")
    assert 3 <= len(lines) <= 5
