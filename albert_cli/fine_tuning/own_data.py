"""Fine-tuning on one's own CSV, TSV or JSON Lines files (`albert-classify --train_file=...`): GLUE's
task (`glue.GlueFineTuning`: features, metrics, seeds, exports) on data read by `albert_tf.glue.own_data`.

The label names are fixed when training starts (`--label_names`, else the train file's sorted
values) and recorded beside the checkpoints (`label_names.json`), so that a later run on the same
`--output_dir` without `--train_file` (evaluating, predicting, exporting) and `albert-convert`
know them.
"""

import glob
import os

from albert_cli.cli import UsageError, flag_checked, require
from albert_cli.fine_tuning.glue import GlueFineTuning, SplitData
from albert_tf.checkpoints.model_files import LABEL_NAMES_FILE, read_label_names
from albert_tf.glue import own_data
from albert_tf.glue.submission import write_submission
from albert_tf.glue import training

PREDICTIONS_STEM = "predictions"


def default_metrics(regression):
    return ("pearson", "spearman", "mse") if regression else ("accuracy",)


class OwnDataTask(GlueFineTuning):
    """Classification or regression of one text or a pair of texts from `--train_file`,
    `--dev_file` (or a seeded share of the train file) and `--test_file`."""

    def __init__(self, flag_values):
        flags = self.flags = flag_values
        self.columns = [flags.text_column] + ([flags.text_pair_column] if flags.text_pair_column else [])
        self.train_set = self.read(flags.train_file, "train_file", flags.label_names) if flags.train_file else None
        names = None
        if not flags.regression:
            found = None
            if self.train_set is not None:  # two labels or more, whether or not --label_names names them
                found = self.checked(lambda: own_data.label_names_of(self.train_set, flags.label_column), "train_file")
            names = tuple(flags.label_names or ()) or found or self.recorded_label_names()
            require(names is not None, "--label_names: not given, and there is no --train_file to read them from "
                    f"nor a {LABEL_NAMES_FILE} of a run in --output_dir {flags.output_dir}")
            require(len(names) >= 2 and len(set(names)) == len(names),
                    f"--label_names: expected two or more distinct names, got {list(names)}")
        self.dev_set, self.dev_split = self.read_dev_set(names)
        with flag_checked("metrics"):
            task = own_data.own_task(names, flags.regression, self.columns,
                                     flags.metrics or default_metrics(flags.regression))
        super().__init__(flag_values, task)
        kind = "regression" if flags.regression else "labels " + ",".join(names)
        self.run_name = f"{own_data.TASK_NAME} ({kind}; {' + '.join(self.columns)})"

    @property
    def settings_name(self):
        """The run record names the labels and columns: resuming with others is refused."""
        return self.run_name

    def named_labels(self, task):
        return task  # its labels are the names already

    @staticmethod
    def checked(read, flag):
        """`read()`; a bad file is a UsageError naming `--flag` and the file's own line."""
        try:
            return read()
        except (ValueError, FileNotFoundError) as error:
            raise UsageError(f"--{flag}: {error}") from None

    def read(self, path, flag, label_names=None, labelled=True):
        flags = self.flags
        return self.checked(lambda: own_data.read_split(
            path, flags.text_column, flags.label_column, flags.text_pair_column, flags.regression,
            label_names=label_names, file_format=flags.file_format, labelled=labelled), flag)

    def recorded_label_names(self):
        """The label names a training run recorded in --output_dir (or its seeds' directories), or None."""
        output_dir = self.flags.output_dir
        for directory in [output_dir] + sorted(glob.glob(os.path.join(glob.escape(output_dir), "seed_*"))):
            names = self.checked(lambda: read_label_names(directory), "output_dir")  # pylint: disable=cell-var-from-loop
            if names is not None:
                return names
        return None

    def read_dev_set(self, label_names):
        """(dev ExampleSet or None, its split name in the feature cache); the train set loses the
        rows carved from it when there is no --dev_file."""
        flags = self.flags
        if flags.dev_file:
            dev = self.read(flags.dev_file, "dev_file")
            if label_names is not None:
                source = flags.train_file or f"the run in {flags.output_dir}"
                self.checked(lambda: own_data.check_labels_seen(dev, label_names, flags.label_column, source),
                             "dev_file")
            return dev, "dev"
        if self.train_set is None:
            return None, None
        self.train_set, dev = self.checked(
            lambda: own_data.carve_dev(self.train_set, flags.dev_fraction, flags.dev_split_seed), "dev_fraction")
        return dev, f"dev{flags.dev_fraction:g}-seed{flags.dev_split_seed}"

    def check_flags(self):
        flags = self.flags
        require(not flags.do_train or flags.train_file, "--do_train: give --train_file")
        require(not flags.do_eval or self.dev_set is not None, "--do_eval: give --dev_file (or --train_file, whose "
                "rows give a dev split)")
        require(not flags.do_predict or flags.test_file, "--do_predict: give --test_file")
        require(not (flags.regression and flags.label_names), "--label_names: a --regression task has no labels")
        names = self.columns + [flags.label_column]
        require(len(set(names)) == len(names), f"--text_column, --text_pair_column, --label_column: one column "
                f"cannot be two of them ({', '.join(names)})")
        super().check_flags()

    def split_data(self, split):
        if split == "test":
            example_set = self.read(self.flags.test_file, "test_file", labelled=False)
        elif split == "train":
            example_set, split = self.train_set, "train" if self.flags.dev_file else f"train-without-{self.dev_split}"
        else:
            example_set, split = self.dev_set, self.dev_split
        return SplitData(self.flags, self.glue_task, split, self.tokenizer, self.cache_dir, example_set)

    def write_predictions(self, model):
        """`<output_dir>/predictions.tsv`: the test file's line and the predicted label name (or score)."""
        data = self.split_data("test")
        logits = training.predict_logits(training.logits_model(model), data.dataset(self.flags.eval_batch_size),
                                         f"predicting {self.flags.test_file}")
        path = write_submission(self.glue_task, PREDICTIONS_STEM, data.examples, logits, self.flags.output_dir)
        print(f"wrote {path} ({len(data.examples)} rows)")
        return None
