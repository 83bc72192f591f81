"""GLUE fine-tuning: the task's loss and metrics for `albert_tf.training.evaluated_training`
(evaluation on a schedule, the best checkpoint kept by the task's metric)."""

import collections
import weakref

import keras
import numpy as np

from albert_tf.training import keras_predict
from albert_tf.glue.metrics import task_metrics

EvalSet = collections.namedtuple("EvalSet", ["prefix", "dataset", "labels"])
EvalSet.__doc__ = """A dev split: metric-name prefix ("" or "mismatched_"), its dataset, its labels."""


# One logits model per classifier: Keras traces a predict function per model, so a new model for
# each evaluation and prediction traced again each time, and TensorFlow warned about retracing.
_LOGITS_MODELS = weakref.WeakKeyDictionary()


def logits_model(classifier):
    """The classifier with only its `logits` output, for `fit` and `predict` (weights shared); the
    same model on every call for the same classifier."""
    if classifier not in _LOGITS_MODELS:
        _LOGITS_MODELS[classifier] = keras.Model(classifier.input, classifier.output["logits"], name="logits_model")
    return _LOGITS_MODELS[classifier]


def predict_logits(model, dataset, label="predicting"):
    """Logits [N, num_labels] of a (features, label) dataset, in dataset order (progress as `label`)."""
    return keras_predict.predict(model, dataset.map(lambda features, label: features), label)


def evaluate(task, model, eval_sets):
    """The task's metrics on every dev split, names prefixed ("mismatched_accuracy" for MNLI-mm)."""
    results = {}
    for eval_set in eval_sets:
        logits = predict_logits(model, eval_set.dataset, f"evaluating {task.name} {eval_set.prefix}dev")
        metrics = task_metrics(task, eval_set.labels, logits)
        results.update({eval_set.prefix + name: value for name, value in metrics.items()})
    return results


def task_loss(task):
    if task.is_regression:
        return keras.losses.MeanSquaredError()
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def summarize_seeds(task, records):
    """Mean, standard deviation and best of each dev metric over seeds (records of `evaluated_training.fine_tune`)."""
    summary = {}
    for name in records[0]["metrics"]:
        values = np.array([record["metrics"][name] for record in records], np.float64)
        summary[name] = {"mean": float(values.mean()), "std": float(values.std()),
                         "best": float(values.min() if name == "mse" else values.max())}
    summary["num_seeds"] = len(records)
    summary["selection_metric"] = task.selection_metric
    return summary
