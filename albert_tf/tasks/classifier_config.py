"""The config of a classifier (or regression) task: a GLUE task, or one's own CSV, TSV or JSON Lines
files (`train_file`, `dev_file`, `test_file` and their columns): the fields of the flags of `albert-classify`."""

import dataclasses

from albert_tf.choices import PADDING_MODES, TABLE_FILE_FORMATS, TFLITE_QUANTIZATIONS
from albert_tf.tasks.config import MAX_SEED, FineTuningConfig
from albert_tf.tasks.config_error import require


@dataclasses.dataclass
class ClassifierConfig(FineTuningConfig):
    """GLUE's `task_name` (data in `data_dir` or `tfds_data_dir`), unless one's own files are given."""

    output_dir: str = "output/glue"
    task_name: str = "SST-2"
    data_dir: str = None  # <data_dir>/<TASK>/{train,dev,test}.tsv
    tfds_data_dir: str = None
    do_eval: bool = False
    eval_batch_size: int = 32
    train_step: int = 1000
    warmup_step: int = 0
    export_tflite: str = None
    tflite_seq_length: int = 128
    export_serving_tflite: str = None
    recompute: bool = False
    seeds: int = 1
    reinit_pooler: bool = False
    padding: str = "dynamic"
    label_names: list = None
    train_file: str = None
    dev_file: str = None
    test_file: str = None
    file_format: str = None  # None: from each file's extension
    text_column: str = "text"
    text_pair_column: str = None
    label_column: str = "label"
    regression: bool = False
    metrics: list = None  # None: accuracy; pearson, spearman, mse
    dev_fraction: float = 0.1
    dev_split_seed: int = 0

    CHOICES = {"padding": PADDING_MODES, "file_format": TABLE_FILE_FORMATS + (None,),
               "export_serving_tflite": TFLITE_QUANTIZATIONS + (None,)}
    AT_LEAST = {"eval_batch_size": 1, "train_step": 1, "warmup_step": 0, "tflite_seq_length": 3, "seeds": 1}

    @property
    def own_data(self):
        """Whether the data is one's own files rather than a GLUE task's."""
        return bool(self.train_file or self.dev_file or self.test_file)

    def check(self):
        last_seed = self.seed + self.seeds - 1
        require(last_seed <= MAX_SEED, "seeds", "{seed} {seed_value} with {seeds} {seeds_value} reaches seed "
                "{last}, past the largest, {most}", seed_value=self.seed, seeds_value=self.seeds, last=last_seed,
                most=MAX_SEED)
        require(0 < self.dev_fraction < 1, "dev_fraction", "{dev_fraction}: expected a share between 0 and 1, "
                "got {value}", value=self.dev_fraction)
        require(not self.export_serving_tflite or self.export_dir, "export_serving_tflite",
                "{export_serving_tflite} writes into the SavedModel of {export_dir}: give {export_dir} too")
        require(self.export_tflite is None or self.export_tflite.strip(), "export_tflite",
                "{export_tflite} is empty; give a directory")
        if not self.own_data:
            return
        require(not self.do_train or self.train_file, "do_train", "{do_train}: give {train_file}")
        require(not self.do_predict or self.test_file, "do_predict", "{do_predict}: give {test_file}")
        require(not (self.regression and self.label_names), "label_names",
                "{label_names}: a {regression} task has no labels")
        columns = [self.text_column] + ([self.text_pair_column] if self.text_pair_column else []) + [self.label_column]
        require(len(set(columns)) == len(columns), "label_column", "{text_column}, {text_pair_column}, "
                "{label_column}: one column cannot be two of them ({names})", names=", ".join(columns))
