"""RACE (4-way multiple choice) as a fine-tuning task (`albert-race`; its flags: albert_cli/race.py):
the passages per level, the multiple-choice head and its cross-entropy, accuracy on middle, high and
all, the test predictions, the SavedModel that picks options from raw text."""

import os

import keras
import numpy as np
import tensorflow as tf

from albert_cli.cli import UsageError, require
from albert_cli.fine_tuning.task import FineTuningTask, TrainingPlan
from albert_cli.export_flags import export_options
from albert_cli.tflite_output import SAVED_MODEL, export_all
from albert_tf.io_utils import write_json
from albert_tf.models import AlbertMultipleChoice
from albert_tf.race import features as race_features
from albert_tf.race.examples import LEVELS, read_race_examples
from albert_tf.serving.race_export import export_race
from albert_tf.training import keras_predict


class RaceSplit:
    """One split at one level, featurized (cached)."""

    def __init__(self, flags, split, level, tokenizer, cache_dir):
        self.flags = flags
        try:
            self.examples = read_race_examples(flags.data_dir, split, (level,))
        except (ValueError, FileNotFoundError) as error:
            raise UsageError(f"--data_dir: {error}") from None
        self.level = level
        self.labels = np.array([example.label for example in self.examples])
        self.path = race_features.cached_features(self.examples, f"{split}-{level}", tokenizer, cache_dir,
                                                  flags.max_seq_length, flags.max_qa_length)

    def dataset(self, batch_size):
        return race_features.make_dataset(self.path, batch_size, self.flags.max_seq_length, seed=self.flags.seed)


class RaceTask(FineTuningTask):
    """RACE, both levels or one (`--high_only`, `--middle_only`)."""

    name = "RACE"
    selection_metric = "accuracy"
    settings_name = "race"
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def __init__(self, flag_values):
        super().__init__(flag_values)
        self.dev, self.tokenizer, self.cache_dir = [], None, None

    def check_flags(self):
        flags = self.flags
        require(flags.do_train or flags.do_eval or flags.do_predict or flags.export_dir,
                "nothing to do: give at least one of --do_train, --do_eval, --do_predict, --export_dir")
        require(flags.data_dir or not (flags.do_train or flags.do_eval or flags.do_predict),
                "--data_dir is needed (the folder holding RACE/)")
        require(not (flags.high_only and flags.middle_only), "--high_only and --middle_only exclude each other")
        for name in ("train_batch_size", "eval_batch_size", "predict_batch_size", "train_step",
                     "save_checkpoints_steps", "keep_checkpoint_max", "max_qa_length"):
            require(flags[name].value > 0, f"--{name} must be positive, got {flags[name].value}")
        require(flags.warmup_step >= 0, f"--warmup_step must be >= 0, got {flags.warmup_step}")
        require(flags.max_qa_length <= flags.max_seq_length - 3,
                f"--max_qa_length {flags.max_qa_length} leaves no room in --max_seq_length {flags.max_seq_length} "
                "for [CLS] [SEP] [SEP]")
        for name in ("spm_model_file", "albert_config_file"):
            require(tf.io.gfile.exists(flags[name].value), f"--{name}: {flags[name].value} does not exist")

    def levels(self):
        if self.flags.high_only:
            return ("high",)
        if self.flags.middle_only:
            return ("middle",)
        return LEVELS

    def head(self, backbone):
        model = AlbertMultipleChoice(backbone=backbone)
        model(model.example_inputs(), training=False)
        return model

    def read_dev(self, tokenizer, cache_dir):
        self.tokenizer, self.cache_dir = tokenizer, cache_dir  # the test split is read by --do_predict
        if self.flags.do_train or self.flags.do_eval:
            self.dev = [RaceSplit(self.flags, "dev", level, tokenizer, cache_dir) for level in self.levels()]

    def training_plan(self, tokenizer, cache_dir, seed):
        flags = self.flags
        train_data = [RaceSplit(flags, "train", level, tokenizer, cache_dir) for level in self.levels()]
        dataset = race_features.make_dataset([split.path for split in train_data], flags.train_batch_size,
                                             flags.max_seq_length, training=True, seed=seed)
        return TrainingPlan(dataset, flags.train_step, flags.warmup_step, flags.save_checkpoints_steps,
                            f"--train_step={flags.train_step}")

    def accuracies(self, model, splits, batch_size):
        """({"accuracy_<level>": ..., "accuracy": over all}, {level: predicted indexes})."""
        metrics, predictions, correct, total = {}, {}, 0, 0
        for split in splits:
            logits = keras_predict.predict(model, split.dataset(batch_size).map(lambda inputs, label: inputs),
                                           f"predicting {split.level}")
            predictions[split.level] = np.argmax(logits, axis=-1)
            hits = int(np.sum(predictions[split.level] == split.labels))
            metrics[f"accuracy_{split.level}"] = hits / len(split.labels)
            correct, total = correct + hits, total + len(split.labels)
        metrics["accuracy"] = correct / total
        return metrics, predictions

    def evaluate(self, fit_model):
        return self.accuracies(fit_model, self.dev, self.flags.eval_batch_size)[0]

    def report(self, model, splits, batch_size, name):
        metrics, predictions = self.accuracies(model, splits, batch_size)
        write_json(os.path.join(self.flags.output_dir, f"{name}_results.json"), metrics)
        print(f"RACE {name}: " + ", ".join(f"{key}={value:.4f}" for key, value in metrics.items()))
        return metrics, predictions

    def write_evaluation(self, model):
        self.report(model, self.dev, self.flags.eval_batch_size, "eval")

    def write_predictions(self, model):
        test = [RaceSplit(self.flags, "test", level, self.tokenizer, self.cache_dir) for level in self.levels()]
        metrics, predictions = self.report(model, test, self.flags.predict_batch_size, "test")
        write_json(os.path.join(self.flags.output_dir, "test_predictions.json"), {
            example.example_id: "ABCD"[int(choice)]
            for split in test for example, choice in zip(split.examples, predictions[split.level])})
        return metrics

    def export(self, model, predicted_metrics):
        flags = self.flags

        def saved_models():
            return [export_race(model, flags.spm_model_file, flags.export_dir, do_lower_case=flags.do_lower_case,
                                max_seq_length=flags.max_seq_length, max_qa_length=flags.max_qa_length,
                                **export_options())]

        export_all([(SAVED_MODEL, saved_models)])
