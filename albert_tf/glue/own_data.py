"""Fine-tuning data of one's own: a CSV, TSV or JSON Lines file (`table_reader`) with a text column,
optionally a second text (a pair) and a label column; classification with any number of labels,
or regression. The task is a `GlueTask` (`own_task`), so GLUE's features, metrics, training and
exports serve it unchanged.

Label names are the data's own values, sorted (numbers by value: "2" before "10"), so that the
same file gives the same label order however its rows are shuffled; a given list of names fixes
the order instead. Without a dev file the dev split is carved from the train file: a seeded
shuffle of its rows (`carve_dev`), independent of the training seed, so that every `--seeds` run
is scored on the same rows.
"""

import math

import numpy as np

from albert_tf.glue.example_types import ExampleSet, GlueExample
from albert_tf.glue.table_reader import read_rows
from albert_tf.glue.tasks import GlueTask

CLASSIFICATION_METRICS = ("accuracy", "f1", "mcc")
# mse is reported, never a selection metric: the best checkpoint is the one with the highest.
REGRESSION_METRICS = ("pearson", "spearman", "mse")
TASK_NAME = "own_data"


def read_split(path, text_column, label_column, text_pair_column=None, regression=False, label_names=None,
               file_format=None, labelled=True):
    """The `ExampleSet` of one file; labels are names (classification) or floats (regression).

    `label_names`: the labels a row may have (None: any); `labelled=False` (a test file): no label
    column is read. Every bad row is a ValueError naming the file, the line and the column."""
    columns = [text_column] + ([text_pair_column] if text_pair_column else []) + ([label_column] if labelled else [])
    examples = []
    for line, row in read_rows(path, columns, file_format):
        where = f"{path}:{line}"
        texts = [_text(where, row, column) for column in columns[:2 if text_pair_column else 1]]
        label = None
        if labelled:
            value = row[label_column]
            label = _score(where, label_column, value) if regression else _label(where, label_column, value)
            if label_names is not None and not regression and label not in label_names:
                raise ValueError(f"{where}: column {label_column!r}: {label!r} is not one of the label names "
                                 f"{list(label_names)}")
        examples.append(GlueExample(str(line), texts[0], texts[1] if text_pair_column else None, label))
    if not examples:
        raise ValueError(f"{path}: no rows")
    return ExampleSet(examples, path, 0)


def _text(where, row, column):
    value = row[column]
    if not isinstance(value, str):
        raise ValueError(f"{where}: column {column!r} is {_json_kind(value)}, expected a text")
    if not value.strip():
        raise ValueError(f"{where}: column {column!r} is empty; expected a text")
    return value


def _label(where, column, value):
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"{where}: column {column!r} is {_json_kind(value)}; expected a label (a text or a number)")
    label = value.strip() if isinstance(value, str) else str(value)
    if not label or "\n" in label or "\r" in label:
        raise ValueError(f"{where}: column {column!r}: {value!r} is not a label name; expected a non-empty name on "
                         "one line")
    return label


def _score(where, column, value):
    try:
        if isinstance(value, bool):
            raise ValueError
        score = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: column {column!r}: {value!r} is not a number; a regression label is a "
                         "number") from None
    if not math.isfinite(score):
        raise ValueError(f"{where}: column {column!r}: {value!r} is not a finite number")
    return score


def _json_kind(value):
    """How a message names a JSON value's kind."""
    if value is None:
        return "null"
    return {bool: "true or false", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), f"a {type(value).__name__}")


def label_names_of(example_set, label_column):
    """The sorted label names of a training `ExampleSet` (numbers by value); a ValueError unless
    there are two or more."""
    names = sorted({example.label for example in example_set.examples}, key=_label_order)
    if len(names) < 2:
        raise ValueError(f"{example_set.source}:{example_set.examples[0].guid}: column {label_column!r} has the one "
                         f"label {names[0]!r} in every row; classification needs two or more (or regression "
                         "for numbers)")
    return tuple(names)


def _label_order(name):
    try:
        return (0, float(name), name)
    except ValueError:
        return (1, 0.0, name)


def check_labels_seen(example_set, label_names, label_column, train_source):
    """A ValueError naming the first row of `example_set` (a dev file) whose label the train file
    (`train_source`) never had."""
    for example in example_set.examples:
        if example.label not in label_names:
            raise ValueError(f"{example_set.source}:{example.guid}: column {label_column!r}: {example.label!r} is "
                             f"not among the labels of {train_source} {list(label_names)}")


def carve_dev(example_set, fraction, seed):
    """(train, dev) `ExampleSet`s of one file: `fraction` of its rows (at least one) drawn by a
    NumPy generator seeded with `seed` for dev, the rest, in file order, for training."""
    count = len(example_set.examples)
    dev_count = max(1, round(count * fraction))
    if dev_count >= count:
        raise ValueError(f"{example_set.source}: {count} row(s) cannot give a dev split of {fraction:g} and "
                         "leave rows to train on; give a dev file")
    dev_rows = set(np.random.default_rng(seed).permutation(count)[:dev_count].tolist())
    rows = example_set.examples
    train = [row for index, row in enumerate(rows) if index not in dev_rows]
    dev = [row for index, row in enumerate(rows) if index in dev_rows]
    return example_set._replace(examples=train), example_set._replace(examples=dev)


def check_metrics(metrics, regression):
    """`metrics` (names; the first picks the best checkpoint) as a tuple; ValueError if one is not
    the kind's."""
    known = REGRESSION_METRICS if regression else CLASSIFICATION_METRICS
    kind = "regression" if regression else "classification"
    unknown = [name for name in metrics if name not in known]
    if unknown or not metrics:
        raise ValueError(f"metric {unknown[0] if unknown else ''!r} is not one of {kind}'s: {', '.join(known)}")
    if metrics[0] == "mse":
        raise ValueError("mse cannot pick the best checkpoint (the highest is kept): put pearson or spearman first")
    return tuple(dict.fromkeys(metrics))


def own_task(label_names, regression, text_columns, metrics):
    """The `GlueTask` of one's own data: `label_names` (ignored for regression), `text_columns`
    (one name, or two for a pair), `metrics` (`check_metrics`'s)."""
    metrics = check_metrics(metrics, regression)
    return GlueTask(name=TASK_NAME, directory=None, labels=None if regression else tuple(label_names),
                    train_columns=None, test_columns=None, tfds_config=None, tfds_text_keys=tuple(text_columns),
                    selection_metric=metrics[0], metric_names=metrics)
