"""The config of RACE (4-way multiple choice) fine-tuning: one field per flag of `albert-race`."""

import dataclasses

from albert_tf.choices import MAX_RACE_QUESTIONS
from albert_tf.preprocessors.packing import special_tokens
from albert_tf.tasks.config import FineTuningConfig
from albert_tf.tasks.config_error import require


@dataclasses.dataclass
class RaceConfig(FineTuningConfig):
    """RACE in `data_dir` (RACE/{train,dev,test}/{middle,high}/), both levels or one."""

    output_dir: str = "output/race"
    data_dir: str = None
    max_qa_length: int = 128
    do_eval: bool = False
    high_only: bool = False
    middle_only: bool = False
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 1e-5  # the README's v2 recipe
    train_step: int = 12000
    warmup_step: int = 1000
    save_checkpoints_steps: int = 100
    export_max_batch_size: int = MAX_RACE_QUESTIONS  # questions, 4 model rows each

    AT_LEAST = {"eval_batch_size": 1, "predict_batch_size": 1, "train_step": 1, "max_qa_length": 1, "warmup_step": 0}

    def check(self):
        require(self.do_train or self.do_eval or self.do_predict or self.export_dir, "do_train",
                "nothing to do: give at least one of {do_train}, {do_eval}, {do_predict}, {export_dir}")
        require(self.data_dir or not (self.do_train or self.do_eval or self.do_predict), "data_dir",
                "{data_dir} is needed (the folder holding RACE/)")
        require(not (self.high_only and self.middle_only), "high_only", "{high_only} and {middle_only} exclude each other")
        require(self.max_qa_length <= self.max_seq_length - special_tokens(2), "max_qa_length",
                "{max_qa_length} {qa} leaves no room in {max_seq_length} {length} for [CLS] [SEP] [SEP]",
                qa=self.max_qa_length, length=self.max_seq_length)
