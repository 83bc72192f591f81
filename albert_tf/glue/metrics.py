"""GLUE metrics in NumPy: accuracy, F1, Matthews correlation, Pearson and Spearman.

Computed on the whole dev set at once (not streamed per batch), so they are exact. The original
reported no F1 (MRPC, QQP) and no Spearman (STS-B); GLUE's leaderboard does.
"""

import numpy as np


def accuracy(labels, predictions):
    return float(np.mean(np.asarray(labels) == np.asarray(predictions)))


def _confusion(labels, predictions):
    labels = np.asarray(labels) == 1
    predictions = np.asarray(predictions) == 1
    tp = float(np.sum(labels & predictions))
    tn = float(np.sum(~labels & ~predictions))
    fp = float(np.sum(~labels & predictions))
    fn = float(np.sum(labels & ~predictions))
    return tp, tn, fp, fn


def f1(labels, predictions):
    """F1 of the positive class (label index 1), 0 when there are no positive predictions or labels."""
    tp, _, fp, fn = _confusion(labels, predictions)
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def matthews_corrcoef(labels, predictions):
    """Matthews correlation for binary labels; 0 when a row or column of the confusion matrix is empty."""
    tp, tn, fp, fn = _confusion(labels, predictions)
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return 0.0 if denominator == 0 else float((tp * tn - fp * fn) / denominator)


def pearson(x, y):
    if np.ptp(x) == 0 or np.ptp(y) == 0:  # a constant has no correlation (avoid rounding noise)
        return 0.0
    x = np.asarray(x, np.float64) - np.mean(x)
    y = np.asarray(y, np.float64) - np.mean(y)
    denominator = np.sqrt(np.sum(x * x) * np.sum(y * y))
    return 0.0 if denominator == 0 else float(np.sum(x * y) / denominator)


def average_ranks(values):
    """Ranks starting at 1, ties sharing their average rank (what Spearman's rho needs)."""
    values = np.asarray(values)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    ranks = np.empty(len(values), np.float64)
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


def spearman(x, y):
    return pearson(average_ranks(x), average_ranks(y))


def task_metrics(task, labels, logits):
    """The task's metrics from dev labels and model logits [N, num_labels]."""
    logits = np.asarray(logits)
    if task.is_regression:
        scores = logits[:, 0]
        labels = np.asarray(labels, np.float64).reshape(-1)
        values = {
            "pearson": pearson(scores, labels),
            "spearman": spearman(scores, labels),
            "mse": float(np.mean((scores - labels) ** 2)),
        }
    else:
        predictions = np.argmax(logits, axis=-1)
        values = {"accuracy": accuracy(labels, predictions)}
        if "f1" in task.metric_names:
            values["f1"] = f1(labels, predictions)
        if "mcc" in task.metric_names:
            values["mcc"] = matthews_corrcoef(labels, predictions)
    return {name: values[name] for name in task.metric_names}


def majority_baseline(task, train_labels, dev_labels):
    """Metrics of always predicting the training set's most frequent class (or mean score)."""
    if task.is_regression:
        constant = np.full((len(dev_labels), 1), float(np.mean(train_labels)))
        return task_metrics(task, dev_labels, constant)
    majority = int(np.bincount(np.asarray(train_labels, np.int64), minlength=task.num_labels).argmax())
    logits = np.zeros((len(dev_labels), task.num_labels))
    logits[:, majority] = 1.0
    return task_metrics(task, dev_labels, logits)
