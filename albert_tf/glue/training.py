"""GLUE fine-tuning: the task's loss, optimizer and metrics on `albert_tf.training.evaluated_training`
(evaluation on a schedule, the best checkpoint kept by the task's metric)."""

import collections
import weakref

import keras
import numpy as np

from albert_tf.training import evaluated_training, keras_predict
from albert_tf.glue.metrics import task_metrics
from albert_tf.training.optimization import create_optimizer

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


def build_optimizer(name, learning_rate, train_steps, warmup_steps, mixed_precision=None):
    """The original's fine-tuning optimizer: weight decay 0.01, global-norm clip 1.0, linear decay."""
    optimizer = create_optimizer(
        name, learning_rate, num_train_steps=train_steps, num_warmup_steps=warmup_steps,
        global_clipnorm=1.0,
    )
    if mixed_precision == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def fine_tune(task, classifier, optimizer, train_dataset, eval_sets, train_steps, eval_every,
              output_dir, keep_checkpoint_max=5, jit_compile=False):
    """Trains `classifier` for `train_steps`, evaluating every `eval_every` (`evaluated_training`);
    returns {"step": best step, "metrics": its dev metrics}. Call under the strategy's scope."""
    return evaluated_training.fine_tune(
        logits_model(classifier), optimizer, train_dataset, lambda model: evaluate(task, model, eval_sets),
        task.selection_metric, train_steps, eval_every, output_dir, keep_checkpoint_max=keep_checkpoint_max,
        jit_compile=jit_compile, loss=task_loss(task), saved_model=classifier)


def summarize_seeds(task, records):
    """Mean, standard deviation and best of each dev metric over seeds (records from `fine_tune`)."""
    summary = {}
    for name in records[0]["metrics"]:
        values = np.array([record["metrics"][name] for record in records], np.float64)
        summary[name] = {"mean": float(values.mean()), "std": float(values.std()),
                         "best": float(values.min() if name == "mse" else values.max())}
    summary["num_seeds"] = len(records)
    summary["selection_metric"] = task.selection_metric
    return summary
