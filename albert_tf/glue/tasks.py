"""The GLUE tasks: where their text and labels live (TSV columns, TFDS features) and how they are scored.

One `GlueTask` per task holds everything the readers, the metrics and the submission writer need,
with the original's semantics (google-research/albert `classifier_utils.py`): the same columns,
label lists (their order fixes the logit index), and the metric that picks the best checkpoint.
"""

import dataclasses

from albert_tf.error_text import SettingError

BINARY_LABELS = ("0", "1")
NLI_LABELS = ("contradiction", "entailment", "neutral")
ENTAILMENT_LABELS = ("entailment", "not_entailment")


@dataclasses.dataclass(frozen=True)
class TsvColumns:
    """Column indexes of one GLUE TSV file; `label=None` for the unlabelled test files."""

    text_a: int
    text_b: int = None
    label: int = None
    index: int = None
    has_header: bool = True


@dataclasses.dataclass(frozen=True)
class GlueTask:
    """One GLUE task.

    `labels` is None for regression (STS-B: one output, the score). `eval_splits` maps a metric
    prefix to a dev split (MNLI has matched and mismatched); `test_splits` maps a GLUE submission
    file stem to a test split. `tsv_files` maps our split names to files under `<data_dir>/<dir>/`.
    `score_range` is a regression score's (lowest, highest): a score outside is used as it is
    (as the original does) but warned about. `display_labels`: names for `labels` where the task
    defines them (SST-2's "0" is "negative", as TFDS names it): exports and Hugging Face configs
    show them, GLUE's submission files keep `labels`.
    """

    name: str
    directory: str
    labels: tuple
    train_columns: TsvColumns
    test_columns: TsvColumns
    tfds_config: str
    tfds_text_keys: tuple
    selection_metric: str
    metric_names: tuple
    eval_splits: tuple = (("", "dev"),)
    test_splits: tuple = None
    tsv_files: tuple = (("train", "train.tsv"), ("dev", "dev.tsv"), ("test", "test.tsv"))
    tfds_splits: tuple = (("train", "train"), ("dev", "validation"), ("test", "test"))
    skip_malformed_rows: bool = False
    score_range: tuple = None
    display_labels: tuple = None

    @property
    def label_names(self):
        """What each logit means to a person: `display_labels`, else `labels` (None for regression)."""
        return self.display_labels or self.labels

    @property
    def is_regression(self):
        return self.labels is None

    @property
    def num_labels(self):
        return 1 if self.is_regression else len(self.labels)

    @property
    def is_pair(self):
        return len(self.tfds_text_keys) == 2

    @property
    def text_feature_names(self):
        """Names of the raw-text inputs of the serving signature."""
        return ("sentence1", "sentence2") if self.is_pair else ("sentence",)

    @property
    def submissions(self):
        return self.test_splits or ((self.name, "test"),)

    def tsv_file(self, split):
        return dict(self.tsv_files)[split]

    def tfds_split(self, split):
        return dict(self.tfds_splits)[split]


_ACCURACY = ("accuracy",)
_ACCURACY_F1 = ("accuracy", "f1")
_SINGLE_TEST = TsvColumns(index=0, text_a=1)
_PAIR_TEST = TsvColumns(index=0, text_a=1, text_b=2)
_PAIR_LAST_LABEL = TsvColumns(text_a=1, text_b=2, label=-1)

_TASK_LIST = (
    GlueTask(
        name="CoLA", directory="CoLA", labels=BINARY_LABELS,
        train_columns=TsvColumns(text_a=3, label=1, has_header=False), test_columns=_SINGLE_TEST,
        tfds_config="cola", tfds_text_keys=("sentence",),
        selection_metric="mcc", metric_names=("mcc", "accuracy"),
        display_labels=("unacceptable", "acceptable"),
    ),
    GlueTask(
        name="SST-2", directory="SST-2", labels=BINARY_LABELS,
        train_columns=TsvColumns(text_a=0, label=1), test_columns=_SINGLE_TEST,
        tfds_config="sst2", tfds_text_keys=("sentence",),
        selection_metric="accuracy", metric_names=_ACCURACY,
        display_labels=("negative", "positive"),
    ),
    GlueTask(
        name="MRPC", directory="MRPC", labels=BINARY_LABELS,
        train_columns=TsvColumns(text_a=3, text_b=4, label=0),
        test_columns=TsvColumns(index=0, text_a=3, text_b=4),
        tfds_config="mrpc", tfds_text_keys=("sentence1", "sentence2"),
        selection_metric="accuracy", metric_names=_ACCURACY_F1,
        display_labels=("not_equivalent", "equivalent"),
    ),
    GlueTask(
        name="STS-B", directory="STS-B", labels=None,
        train_columns=TsvColumns(text_a=7, text_b=8, label=-1),
        test_columns=TsvColumns(index=0, text_a=7, text_b=8),
        tfds_config="stsb", tfds_text_keys=("sentence1", "sentence2"),
        selection_metric="pearson", metric_names=("pearson", "spearman", "mse"), score_range=(0.0, 5.0),
    ),
    GlueTask(
        name="QQP", directory="QQP", labels=BINARY_LABELS,
        train_columns=TsvColumns(text_a=3, text_b=4, label=5), test_columns=_PAIR_TEST,
        tfds_config="qqp", tfds_text_keys=("question1", "question2"),
        selection_metric="accuracy", metric_names=_ACCURACY_F1, skip_malformed_rows=True,
        display_labels=("not_duplicate", "duplicate"),
    ),
    GlueTask(
        name="MNLI", directory="MNLI", labels=NLI_LABELS,
        train_columns=TsvColumns(text_a=8, text_b=9, label=-1),
        test_columns=TsvColumns(index=0, text_a=8, text_b=9),
        tfds_config="mnli", tfds_text_keys=("premise", "hypothesis"),
        selection_metric="accuracy", metric_names=_ACCURACY,
        eval_splits=(("", "dev"), ("mismatched_", "dev_mismatched")),
        test_splits=(("MNLI-m", "test"), ("MNLI-mm", "test_mismatched")),
        tsv_files=(
            ("train", "train.tsv"), ("dev", "dev_matched.tsv"), ("dev_mismatched", "dev_mismatched.tsv"),
            ("test", "test_matched.tsv"), ("test_mismatched", "test_mismatched.tsv"),
        ),
        tfds_splits=(
            ("train", "train"), ("dev", "validation_matched"), ("dev_mismatched", "validation_mismatched"),
            ("test", "test_matched"), ("test_mismatched", "test_mismatched"),
        ),
    ),
    GlueTask(
        name="QNLI", directory="QNLI", labels=ENTAILMENT_LABELS,
        train_columns=_PAIR_LAST_LABEL, test_columns=_PAIR_TEST,
        tfds_config="qnli", tfds_text_keys=("question", "sentence"),
        selection_metric="accuracy", metric_names=_ACCURACY,
    ),
    GlueTask(
        name="RTE", directory="RTE", labels=ENTAILMENT_LABELS,
        train_columns=_PAIR_LAST_LABEL, test_columns=_PAIR_TEST,
        tfds_config="rte", tfds_text_keys=("sentence1", "sentence2"),
        selection_metric="accuracy", metric_names=_ACCURACY,
    ),
    GlueTask(
        name="WNLI", directory="WNLI", labels=BINARY_LABELS,
        train_columns=_PAIR_LAST_LABEL, test_columns=_PAIR_TEST,
        tfds_config="wnli", tfds_text_keys=("sentence1", "sentence2"),
        selection_metric="accuracy", metric_names=_ACCURACY,
        display_labels=("not_entailment", "entailment"),
    ),
)

# The diagnostic set: MNLI labels, test split only, predicted with an MNLI model.
AX = GlueTask(
    name="AX", directory="diagnostic", labels=NLI_LABELS,
    train_columns=_PAIR_TEST, test_columns=_PAIR_TEST,
    tfds_config="ax", tfds_text_keys=("premise", "hypothesis"),
    selection_metric="accuracy", metric_names=_ACCURACY,
    tsv_files=(("test", "diagnostic.tsv"),), tfds_splits=(("test", "test"),),
)

TASKS = {task.name: task for task in _TASK_LIST}


def _normalized(name):
    return name.lower().replace("-", "").replace("_", "")


def get_task(name):
    """The task called `name` (case-insensitive; "sst-2", "SST2" and "sst_2" are all SST-2)."""
    for task in _TASK_LIST:
        if _normalized(task.name) == _normalized(name or ""):
            return task
    raise SettingError("{task_name}: unknown GLUE task {name!r}; known tasks: {known}", name=name,
                       known=", ".join(TASKS))
