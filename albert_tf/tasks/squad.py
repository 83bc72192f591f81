"""SQuAD v1.1 / v2.0 as a fine-tuning task (`albert-squad`; its config: `SquadConfig`): the
question-answering head and loss, F1 / exact match on `predict_file`, the answer files, the
SavedModel that answers raw text."""

import os

from absl import logging

from albert_tf.io_utils import same_file, write_json
from albert_tf.models import AlbertQuestionAnswering
from albert_tf.serving.squad_export import export_squad
from albert_tf.serving.litert.task_library import check_question_answerer, check_task_library_windows
from albert_tf.serving.litert.publish import QUESTION_ANSWERER_STEM, export_tflite_question_answerer
from albert_tf.squad import features as squad_features
from albert_tf.squad.examples import load_squad_json, read_squad_examples
from albert_tf.squad.prediction import answer_and_score, raw_results
from albert_tf.tasks.config_error import ConfigError, checked, require
from albert_tf.tasks.export_formats import LITERT, SAVED_MODEL, check_litert_output, export_all
from albert_tf.tasks.task import FineTuningTask, TrainingPlan
from albert_tf.training.evaluated_training import read_best_metrics

# What `do_predict` writes into `output_dir`.
PREDICTION_FILES = ("predictions.json", "nbest_predictions.json", "null_odds.json", "eval_results.json")


class SquadData:
    """One SQuAD file read, featurized (cached) and ready to batch."""

    def __init__(self, config, field, is_training, tokenizer, cache_dir):
        """`field`: the config's field naming the file (`train_file`, `predict_file`)."""
        self.config = config
        path = getattr(config, field)
        with checked(field):
            self.examples = read_squad_examples(path, is_training, config.version_2_with_negative)
            self.dataset_json = None if is_training else load_squad_json(path)
            self.path, self.stats = squad_features.cached_features(
                path, self.examples, tokenizer, cache_dir, config.max_seq_length, config.doc_stride,
                config.max_query_length, is_training, config.version_2_with_negative)
        # No windows: every question skipped, or on a paragraph that is empty or does not align.
        what = "trainable questions" if is_training else "questions to answer"
        require(self.stats["num_features"], field, "{%s}: no {what} in {path} (of {read} read, {dropped} on "
                "paragraphs that are empty or do not align)" % field, what=what, path=path, read=len(self.examples),
                dropped=self.stats["num_dropped_examples"])
        logging.info("%s: %s", path, self.stats)
        self.features = None if is_training else squad_features.read_features(self.path)

    def dataset(self, batch_size, training=False):
        return squad_features.make_dataset(self.path, batch_size, self.config.max_seq_length, training=training,
                                           seed=self.config.seed)

    def has_answers(self):
        """Whether the file has gold answers to score against (the dev files do, test files not)."""
        return any(qa.get("answers") for article in self.dataset_json for paragraph in article["paragraphs"]
                   for qa in paragraph["qas"])


class SquadTask(FineTuningTask):
    """SQuAD 1.1, or 2.0 with `version_2_with_negative`."""

    selection_metric = "f1"

    def __init__(self, config, report=logging.info):
        super().__init__(config, report)
        version = "2.0" if config.version_2_with_negative else "1.1"
        self.name = f"SQuAD {version}"
        self.version = version
        self.dev = None

    @property
    def settings_name(self):
        return f"squad v{self.version}"  # as run_settings.json has recorded it from the start

    def check_inputs(self):
        """The predictions would not overwrite the inputs; the LiteRT export's directory and windows."""
        config = self.config
        for name in PREDICTION_FILES:
            output = os.path.join(config.output_dir, name)
            for field in ("train_file", "predict_file"):
                source = getattr(config, field)
                require(not source or not same_file(output, source), "output_dir", "{output_dir}: {output!r} is also "
                        "an input ({%s} {source!r}); refusing to overwrite it" % field, output=output, source=source)
        if config.export_tflite is not None:
            check_litert_output(config.export_tflite, QUESTION_ANSWERER_STEM, config.do_lower_case, "the Task Library")
            with checked("export_tflite"):
                check_task_library_windows(config.max_seq_length, config.max_query_length)

    def check_config(self, model_config):
        if self.config.export_tflite is not None:
            with checked("export_tflite"):
                check_question_answerer(self.config.version_2_with_negative, model_config)

    def head(self, backbone):
        model = AlbertQuestionAnswering(backbone=backbone, version_2_with_negative=self.config.version_2_with_negative,
                                        start_n_top=self.config.start_n_top, end_n_top=self.config.end_n_top,
                                        dropout_rate=self.config.dropout_prob)
        model(model.example_inputs(), training=False)  # creates the weights, to load or restore them
        return model

    def read_dev(self, tokenizer, cache_dir):
        if self.config.do_train or self.config.do_predict:  # an export alone reads no questions
            self.dev = SquadData(self.config, "predict_file", False, tokenizer, cache_dir)

    def training_plan(self, tokenizer, cache_dir, seed):
        config = self.config
        train_data = SquadData(config, "train_file", True, tokenizer, cache_dir)
        # As the original: steps from the number of questions, not of windows.
        train_steps = max(1, int(len(train_data.examples) / config.train_batch_size * config.num_train_epochs))
        require(self.dev.has_answers(), "predict_file", "{predict_file} {path} has no gold answers to pick the best "
                "checkpoint", path=config.predict_file)
        return TrainingPlan(train_data.dataset(config.train_batch_size, training=True), train_steps,
                            int(train_steps * config.warmup_proportion),
                            min(config.save_checkpoints_steps, train_steps),
                            "num_train_epochs")

    def answer(self, model):
        """(answers, nbest, null_odds, metrics) of `model` on `predict_file` (`prediction.answer_and_score`)."""
        config, dev = self.config, self.dev
        results = raw_results(model, dev.dataset(config.predict_batch_size), dev.features)
        return answer_and_score(config.version_2_with_negative, dev.examples, dev.features, results,
                                dev.dataset_json if dev.has_answers() else None, config.n_best_size,
                                config.max_answer_length, config.null_score_diff_threshold)

    def evaluate(self, fit_model):
        return self.answer(fit_model)[3]

    def write_predictions(self, model):
        answers, nbest, null_odds, metrics = self.answer(model)
        outputs = {"predictions.json": answers, "nbest_predictions.json": nbest}
        if null_odds is not None:
            outputs["null_odds.json"] = null_odds
        if metrics is not None:
            outputs["eval_results.json"] = metrics
        for name, value in outputs.items():
            write_json(os.path.join(self.config.output_dir, name), value)
        logging.info("wrote %s to %s", ", ".join(outputs), self.config.output_dir)
        if metrics is not None:
            self.report(f"{self.name} {self.config.predict_file}: " + ", ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
        return metrics

    def export_threshold(self, predicted_metrics):
        """v2.0: the config's threshold, else the one found on `predict_file` (this run's, or the best
        checkpoint's)."""
        config = self.config
        if config.null_score_diff_threshold is not None or not config.version_2_with_negative:
            return config.null_score_diff_threshold
        best = read_best_metrics(config.output_dir)
        for metrics in (predicted_metrics, best and best["metrics"]):
            if metrics and metrics.get("null_score_diff_threshold") is not None:
                return metrics["null_score_diff_threshold"]
        raise ConfigError("export_dir", None, "{export_dir} of a SQuAD 2.0 model needs {null_score_diff_threshold}, or "
                          "{do_predict} on a {predict_file} with answers, or a fine-tuned {output_dir}")

    def exports(self):
        return bool(self.config.export_dir or self.config.export_tflite)

    def export(self, model, predicted_metrics):
        config = self.config

        def saved_models():
            return [self.export_saved_model(model, predicted_metrics)]

        def tflite_files():
            return export_tflite_question_answerer(model, config.export_tflite, config.spm_model_file)

        export_all([(LITERT, tflite_files if config.export_tflite else None),
                    (SAVED_MODEL, saved_models if config.export_dir else None)], self.report)

    def export_saved_model(self, model, predicted_metrics):
        config = self.config
        return export_squad(model, config.spm_model_file, config.export_dir, do_lower_case=config.do_lower_case,
                            max_seq_length=config.max_seq_length, doc_stride=config.doc_stride,
                            max_query_length=config.max_query_length, n_best_size=config.n_best_size,
                            max_answer_length=config.max_answer_length,
                            null_score_diff_threshold=self.export_threshold(predicted_metrics),
                            **config.export_options())
