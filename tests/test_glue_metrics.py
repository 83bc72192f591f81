"""GLUE metrics against hand-computed values and textbook definitions."""

import numpy as np
import pytest

from albert_tf.glue import metrics
from albert_tf.glue.tasks import get_task


def test_accuracy_f1_and_mcc_from_a_known_confusion_matrix():
    # tp=3, tn=2, fp=1, fn=2
    labels = [1, 1, 1, 1, 1, 0, 0, 0]
    predictions = [1, 1, 1, 0, 0, 1, 0, 0]
    assert metrics.accuracy(labels, predictions) == pytest.approx(5 / 8)
    assert metrics.f1(labels, predictions) == pytest.approx(2 * 3 / (2 * 3 + 1 + 2))
    assert metrics.matthews_corrcoef(labels, predictions) == pytest.approx((3 * 2 - 1 * 2) / np.sqrt(4 * 5 * 3 * 4))


def test_degenerate_predictions_score_zero_not_nan():
    assert metrics.matthews_corrcoef([0, 1, 1], [1, 1, 1]) == 0.0
    assert metrics.f1([0, 0], [0, 0]) == 0.0
    assert metrics.pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) == 0.0


def test_pearson_matches_numpy_and_spearman_handles_ties():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50)
    assert metrics.pearson(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert metrics.spearman([1, 2, 3, 4], [10, 20, 30, 1000]) == pytest.approx(1.0)
    assert metrics.spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(
        np.corrcoef([1, 2.5, 2.5, 4], [1, 3, 2, 4])[0, 1])


def test_task_metrics_pick_each_tasks_metrics():
    logits = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    assert set(metrics.task_metrics(get_task("mrpc"), [1, 0, 0], logits)) == {"accuracy", "f1"}
    assert set(metrics.task_metrics(get_task("cola"), [1, 0, 0], logits)) == {"mcc", "accuracy"}
    stsb = metrics.task_metrics(get_task("sts-b"), [0.0, 2.0, 4.0], np.array([[1.0], [2.0], [3.0]]))
    assert stsb == {"pearson": pytest.approx(1.0), "spearman": pytest.approx(1.0), "mse": pytest.approx(2 / 3)}


def test_majority_baseline():
    task = get_task("sst-2")
    assert metrics.majority_baseline(task, [1, 1, 0], [1, 0, 0, 0]) == {"accuracy": 0.25}
