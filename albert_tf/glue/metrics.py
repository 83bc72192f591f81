"""GLUE metrics: accuracy, F1, Matthews correlation, Pearson and Spearman.

The functions GLUE's own scorers use (scikit-learn's `f1_score` and `matthews_corrcoef`, scipy's
`pearsonr` and `spearmanr`), on the whole dev set at once (not streamed per batch), so they are
exact. The original reported no F1 (MRPC, QQP) and no Spearman (STS-B); GLUE's leaderboard does.
"""

import numpy as np
import scipy.stats
import sklearn.metrics


def accuracy(labels, predictions):
    return float(np.mean(np.asarray(labels) == np.asarray(predictions)))


def f1(labels, predictions, num_labels=2):
    """F1 of the positive class (label index 1) of two labels, the mean of each label's F1 (macro)
    of more; 0 for a label without predictions or rows."""
    if num_labels > 2:
        return float(sklearn.metrics.f1_score(labels, predictions, labels=list(range(num_labels)), average="macro",
                                              zero_division=0.0))
    return float(sklearn.metrics.f1_score(labels, predictions, pos_label=1, zero_division=0.0))


def matthews_corrcoef(labels, predictions):
    """Matthews correlation; 0 when a row or column of the confusion matrix is empty."""
    return float(sklearn.metrics.matthews_corrcoef(labels, predictions))


def _correlation(function, x, y):
    if np.ptp(x) == 0 or np.ptp(y) == 0:  # a constant has no correlation (scipy would give NaN)
        return 0.0
    return float(function(x, y).statistic)


def pearson(x, y):
    return _correlation(scipy.stats.pearsonr, x, y)


def spearman(x, y):
    return _correlation(scipy.stats.spearmanr, x, y)


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
            values["f1"] = f1(labels, predictions, task.num_labels)
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
