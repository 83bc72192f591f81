"""A SQuAD model's answers for a feature file, scored as the original's runners score them."""

import numpy as np

from albert_tf.training import keras_predict
from albert_tf.squad import evaluation, postprocess


def raw_results(model, dataset, features):
    """{unique_id: {output name: value}} for `features` (in the order of `dataset`, their file)."""
    outputs = keras_predict.predict(model, dataset.map(lambda inputs, labels: inputs), "predicting answers")
    outputs = {name: np.asarray(value) for name, value in outputs.items()}
    if len(next(iter(outputs.values()))) != len(features):
        raise ValueError(f"{len(features)} features but the model gave {len(next(iter(outputs.values())))} results")
    return {feature.unique_id: {name: value[i] for name, value in outputs.items()}
            for i, feature in enumerate(features)}


def answer_and_score(version_2_with_negative, examples, features, results, dataset=None, n_best_size=20,
                     max_answer_length=30, null_score_diff_threshold=None):
    """(answers, nbest, null_odds or None, metrics or None); `dataset` is the JSON's `data` with gold answers.

    v2.0 as the original's `evaluate_v2`: without a given threshold, the best-F1 threshold is
    found on `dataset` itself from the always-answering predictions, the answers are redone with
    it, and the metrics are those of the redone answers, with `null_score_diff_threshold` added.
    """
    if not version_2_with_negative:
        answers, nbest = postprocess.predictions_v1(examples, features, results, n_best_size, max_answer_length)
        return answers, nbest, None, (evaluation.evaluate_v1(dataset, answers) if dataset is not None else None)
    threshold = null_score_diff_threshold
    if threshold is None and dataset is not None:
        answers, _, null_odds = postprocess.predictions_v2(examples, features, results, n_best_size, max_answer_length)
        threshold = evaluation.evaluate_v2(dataset, answers, null_odds)["best_f1_thresh"]
    answers, nbest, null_odds = postprocess.predictions_v2(examples, features, results, n_best_size,
                                                           max_answer_length, threshold)
    metrics = None
    if dataset is not None:
        metrics = evaluation.evaluate_v2(dataset, answers, null_odds)
        metrics["null_score_diff_threshold"] = threshold
    return answers, nbest, null_odds, metrics
