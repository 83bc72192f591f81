"""RACE (4-way multiple choice) as a fine-tuning task (`albert-race`; its config: `RaceConfig`):
the passages per level, the multiple-choice head and its cross-entropy, accuracy on middle, high and
all, the test predictions, the SavedModel that picks options from raw text."""

import os

import keras
from absl import logging
import numpy as np

from albert_tf.io_utils import write_json
from albert_tf.models import AlbertMultipleChoice
from albert_tf.race import features as race_features
from albert_tf.race.examples import LEVELS, read_race_examples
from albert_tf.serving.race_export import export_race
from albert_tf.tasks.config_error import checked
from albert_tf.tasks.export_formats import SAVED_MODEL, export_all
from albert_tf.tasks.task import FineTuningTask, TrainingPlan
from albert_tf.training import keras_predict


class RaceSplit:
    """One split at one level, featurized (cached)."""

    def __init__(self, config, split, level, tokenizer, cache_dir):
        self.config = config
        with checked("data_dir"):
            self.examples = read_race_examples(config.data_dir, split, (level,))
        self.level = level
        self.labels = np.array([example.label for example in self.examples])
        self.path = race_features.cached_features(self.examples, f"{split}-{level}", tokenizer, cache_dir,
                                                  config.max_seq_length, config.max_qa_length)

    def dataset(self, batch_size):
        return race_features.make_dataset(self.path, batch_size, self.config.max_seq_length, seed=self.config.seed)


class RaceTask(FineTuningTask):
    """RACE, both levels or one (`high_only`, `middle_only`)."""

    name = "RACE"
    selection_metric = "accuracy"
    settings_name = "race"
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def __init__(self, config, report=logging.info):
        super().__init__(config, report)
        self.dev, self.tokenizer, self.cache_dir = [], None, None

    def levels(self):
        if self.config.high_only:
            return ("high",)
        if self.config.middle_only:
            return ("middle",)
        return LEVELS

    def head(self, backbone):
        model = AlbertMultipleChoice(backbone=backbone)
        model(model.example_inputs(), training=False)
        return model

    def read_dev(self, tokenizer, cache_dir):
        self.tokenizer, self.cache_dir = tokenizer, cache_dir  # the test split is read by `do_predict`
        if self.config.do_train or self.config.do_eval:
            self.dev = [RaceSplit(self.config, "dev", level, tokenizer, cache_dir) for level in self.levels()]

    def training_plan(self, tokenizer, cache_dir, seed):
        config = self.config
        train_data = [RaceSplit(config, "train", level, tokenizer, cache_dir) for level in self.levels()]
        dataset = race_features.make_dataset([split.path for split in train_data], config.train_batch_size,
                                             config.max_seq_length, training=True, seed=seed)
        return TrainingPlan(dataset, config.train_step, config.warmup_step, config.save_checkpoints_steps,
                            "train_step")

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
        return self.accuracies(fit_model, self.dev, self.config.eval_batch_size)[0]

    def write_accuracies(self, model, splits, batch_size, name):
        """`<output_dir>/<name>_results.json` and its line; returns `accuracies`' answer."""
        metrics, predictions = self.accuracies(model, splits, batch_size)
        write_json(os.path.join(self.config.output_dir, f"{name}_results.json"), metrics)
        self.report(f"RACE {name}: " + ", ".join(f"{key}={value:.4f}" for key, value in metrics.items()))
        return metrics, predictions

    def write_evaluation(self, model):
        self.write_accuracies(model, self.dev, self.config.eval_batch_size, "eval")

    def write_predictions(self, model):
        test = [RaceSplit(self.config, "test", level, self.tokenizer, self.cache_dir) for level in self.levels()]
        metrics, predictions = self.write_accuracies(model, test, self.config.predict_batch_size, "test")
        write_json(os.path.join(self.config.output_dir, "test_predictions.json"), {
            example.example_id: "ABCD"[int(choice)]
            for split in test for example, choice in zip(split.examples, predictions[split.level])})
        return metrics

    def export(self, model, predicted_metrics):
        config = self.config

        def saved_models():
            return [export_race(model, config.spm_model_file, config.export_dir, do_lower_case=config.do_lower_case,
                                max_seq_length=config.max_seq_length, max_qa_length=config.max_qa_length,
                                **config.export_options())]

        export_all([(SAVED_MODEL, saved_models)], self.report)
