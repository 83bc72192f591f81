"""The config of SQuAD v1.1 / v2.0 fine-tuning: one field per flag of `albert-squad`."""

import dataclasses

from albert_tf.choices import END_N_TOP, MAX_WINDOWS, START_N_TOP
from albert_tf.preprocessors.squad_windowing import SquadWindowing
from albert_tf.tasks.config import FineTuningConfig
from albert_tf.tasks.config_error import require


@dataclasses.dataclass
class SquadConfig(FineTuningConfig):
    """SQuAD 1.1, or 2.0 with `version_2_with_negative`; training evaluates on `predict_file`."""

    output_dir: str = "output/squad"
    train_file: str = None
    predict_file: str = None
    version_2_with_negative: bool = False
    # The windows: [CLS] question [SEP] paragraph part [SEP].
    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    # Training: steps from the number of questions.
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    recompute: bool = False
    # The answers.
    predict_batch_size: int = 8
    n_best_size: int = 20
    max_answer_length: int = 30
    start_n_top: int = START_N_TOP  # v2.0: start positions searched per window
    end_n_top: int = END_N_TOP  # v2.0: end positions searched per start
    dropout_prob: float = 0.1  # v2.0: in the answerability layer
    null_score_diff_threshold: float = None  # None: the best-F1 threshold found on predict_file
    export_tflite: str = None
    export_max_windows: int = MAX_WINDOWS

    AT_LEAST = {name: 1 for name in ("predict_batch_size", "n_best_size", "max_answer_length", "doc_stride",
                                     "max_query_length", "start_n_top", "end_n_top", "export_max_windows")}

    def check(self):
        require(self.do_train or self.do_predict or self.export_dir or self.export_tflite, "do_train",
                "nothing to do: give at least one of {do_train}, {do_predict}, {export_dir}, {export_tflite}")
        require(not self.do_train or self.train_file, "train_file", "{do_train} needs {train_file}")
        require(self.predict_file or not self.do_predict, "predict_file",
                "{do_predict} needs {predict_file} (the questions to answer)")
        require(self.predict_file or not self.do_train, "predict_file",
                "{do_train} needs {predict_file} (training evaluates on it to keep the best checkpoint)")
        require(self.num_train_epochs > 0, "num_train_epochs", "{num_train_epochs} must be positive, got {value}",
                value=self.num_train_epochs)
        require(0 <= self.warmup_proportion < 1, "warmup_proportion",
                "{warmup_proportion} must be in [0, 1), got {value}", value=self.warmup_proportion)
        require(self.windowing().doc_budget(self.max_query_length) >= 1, "max_seq_length",
                "{max_seq_length} {length} leaves no room for the paragraph after {max_query_length} {query} and "
                "[CLS] [SEP] [SEP]", length=self.max_seq_length, query=self.max_query_length)
        require(self.start_n_top <= self.max_seq_length and self.end_n_top <= self.max_seq_length, "start_n_top",
                "{start_n_top} and {end_n_top} must not exceed {max_seq_length}")
        require(self.export_tflite is None or self.export_tflite.strip(), "export_tflite",
                "{export_tflite} is empty; give a directory")

    def windowing(self):
        """The window rules these settings give (the feature files' and the export's)."""
        return SquadWindowing(self.max_seq_length, self.doc_stride, self.max_query_length)

    def export_options(self):
        return dict(super().export_options(), max_windows=self.export_max_windows)
