"""Fine-tuning on one's own CSV, TSV or JSON Lines files (`albert-classify --train_file=...`): GLUE's
task (`classifier.GlueFineTuning`: features, metrics, seeds, exports) on data read by
`albert_tf.glue.own_data`.

The label names are fixed when training starts (`label_names`, else the train file's sorted
values) and recorded beside the checkpoints (`label_names.json`), so that a later run on the same
`output_dir` without `train_file` (evaluating, predicting, exporting) and `albert-convert` know them.
"""

import glob
import os

from absl import logging

from albert_tf.checkpoints.model_files import LABEL_NAMES_FILE, read_label_names
from albert_tf.glue import own_data
from albert_tf.glue import training
from albert_tf.glue.submission import write_submission
from albert_tf.tasks.classifier import GlueFineTuning, SplitData
from albert_tf.tasks.config_error import ConfigError, checked, require

PREDICTIONS_STEM = "predictions"


def default_metrics(regression):
    return ("pearson", "spearman", "mse") if regression else ("accuracy",)


class OwnDataTask(GlueFineTuning):
    """Classification or regression of one text or a pair of texts from `train_file`, `dev_file`
    (or a seeded share of the train file) and `test_file`."""

    def __init__(self, config, report=logging.info):
        self.config = config
        self.columns = [config.text_column] + ([config.text_pair_column] if config.text_pair_column else [])
        self.train_set = self.read(config.train_file, "train_file", config.label_names) if config.train_file else None
        names = None
        if not config.regression:
            found = None
            if self.train_set is not None:  # two labels or more, whether or not label_names names them
                found = self.read_checked(lambda: own_data.label_names_of(self.train_set, config.label_column), "train_file")
            names = tuple(config.label_names or ()) or found or self.recorded_label_names()
            require(names is not None, "label_names", "{label_names}: not given, and there is no {train_file} to read "
                    "them from nor a {file} of a run in {output_dir} {directory}", file=LABEL_NAMES_FILE,
                    directory=config.output_dir)
            if len(names) < 2 or len(set(names)) != len(names):
                raise ConfigError("label_names", f"expected two or more distinct names, got {list(names)}")
        self.dev_set, self.dev_split = self.read_dev_set(names)
        with checked("metrics"):
            task = own_data.own_task(names, config.regression, self.columns,
                                     config.metrics or default_metrics(config.regression))
        super().__init__(config, report, task)
        kind = "regression" if config.regression else "labels " + ",".join(names)
        self.run_name = f"{own_data.TASK_NAME} ({kind}; {' + '.join(self.columns)})"

    @property
    def settings_name(self):
        """The run record names the labels and columns: resuming with others is refused."""
        return self.run_name

    def named_labels(self, task):
        return task  # its labels are the names already

    @staticmethod
    def read_checked(read, field):
        """`read()`; a bad file is a ConfigError naming `field` and the file's own line."""
        with checked(field):
            return read()

    def read(self, path, field, label_names=None, labelled=True):
        config = self.config
        return self.read_checked(lambda: own_data.read_split(
            path, config.text_column, config.label_column, config.text_pair_column, config.regression,
            label_names=label_names, file_format=config.file_format, labelled=labelled), field)

    def recorded_label_names(self):
        """The label names a training run recorded in `output_dir` (or its seeds' directories), or None."""
        output_dir = self.config.output_dir
        for directory in [output_dir] + sorted(glob.glob(os.path.join(glob.escape(output_dir), "seed_*"))):
            names = self.read_checked(lambda: read_label_names(directory), "output_dir")  # pylint: disable=cell-var-from-loop
            if names is not None:
                return names
        return None

    def read_dev_set(self, label_names):
        """(dev ExampleSet or None, its split name in the feature cache); the train set loses the
        rows carved from it when there is no `dev_file`."""
        config = self.config
        if config.dev_file:
            dev = self.read(config.dev_file, "dev_file")
            if label_names is not None:
                source = config.train_file or f"the run in {config.output_dir}"
                self.read_checked(lambda: own_data.check_labels_seen(dev, label_names, config.label_column, source),
                             "dev_file")
            return dev, "dev"
        if self.train_set is None:
            return None, None
        self.train_set, dev = self.read_checked(
            lambda: own_data.carve_dev(self.train_set, config.dev_fraction, config.dev_split_seed), "dev_fraction")
        return dev, f"dev{config.dev_fraction:g}-seed{config.dev_split_seed}"

    def check_inputs(self):
        require(not self.config.do_eval or self.dev_set is not None, "do_eval", "{do_eval}: give {dev_file} (or "
                "{train_file}, whose rows give a dev split)")
        super().check_inputs()

    def split_data(self, split):
        if split == "test":
            example_set = self.read(self.config.test_file, "test_file", labelled=False)
        elif split == "train":
            example_set, split = self.train_set, "train" if self.config.dev_file else f"train-without-{self.dev_split}"
        else:
            example_set, split = self.dev_set, self.dev_split
        return SplitData(self.config, self.glue_task, split, self.tokenizer, self.cache_dir, example_set)

    def write_predictions(self, model):
        """`<output_dir>/predictions.tsv`: the test file's line and the predicted label name (or score)."""
        data = self.split_data("test")
        logits = training.predict_logits(training.logits_model(model), data.dataset(self.config.eval_batch_size),
                                         f"predicting {self.config.test_file}")
        path = write_submission(self.glue_task, PREDICTIONS_STEM, data.examples, logits, self.config.output_dir)
        self.report(f"wrote {path} ({len(data.examples)} rows)")
        return None


def classifier_task(config, report=logging.info):
    """The task of a `ClassifierConfig`: one's own files (`OwnDataTask`) when it names one, else the
    GLUE task of `task_name`."""
    return OwnDataTask(config, report) if config.own_data else GlueFineTuning(config, report)
