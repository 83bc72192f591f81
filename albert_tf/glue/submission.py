"""GLUE submission files: `<TASK>.tsv` with `index<TAB>prediction` rows, labels by name."""

import os

import numpy as np
import tensorflow as tf

from albert_tf.io_utils import atomic_open


def predictions_from_logits(task, logits):
    """Label names (classification) or scores, clipped to the task's range if it has one (STS-B's
    [0, 5]: a regression head can overshoot, the leaderboard expects the range), one per row."""
    logits = np.asarray(logits)
    if task.is_regression:
        scores = np.clip(logits[:, 0], *task.score_range) if task.score_range else logits[:, 0]
        return [f"{score:.3f}" for score in scores]
    return [task.labels[index] for index in np.argmax(logits, axis=-1)]


def write_submission(task, stem, examples, logits, output_dir):
    """Writes `<output_dir>/<stem>.tsv` for the GLUE server; returns its path."""
    predictions = predictions_from_logits(task, logits)
    if len(predictions) != len(examples):
        raise ValueError(f"{stem}: {len(predictions)} predictions for {len(examples)} examples")
    tf.io.gfile.makedirs(output_dir)
    path = os.path.join(output_dir, f"{stem}.tsv")
    with atomic_open(path, "w") as handle:
        handle.write("index\tprediction\n")
        for example, prediction in zip(examples, predictions):
            handle.write(f"{example.guid}\t{prediction}\n")
    return path
