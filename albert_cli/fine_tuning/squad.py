"""SQuAD v1.1 / v2.0 as a fine-tuning task (`albert-squad`; its flags: albert_cli/squad.py): the
question-answering head and loss, F1 / exact match on --predict_file, the answer files, the
SavedModel that answers raw text."""

import os

import tensorflow as tf
from absl import logging

from albert_cli.cli import UsageError, flag_checked, flag_text, require
from albert_cli.fine_tuning.task import FineTuningTask, TrainingPlan
from albert_cli.export_flags import export_options
from albert_cli.tflite_output import LITERT, SAVED_MODEL, check_tflite_output, export_all
from albert_tf.io_utils import refuse_overwriting_inputs, write_json
from albert_tf.models import AlbertQuestionAnswering
from albert_tf.serving.squad_export import export_squad
from albert_tf.serving.litert.task_library import check_question_answerer, check_task_library_windows
from albert_tf.serving.litert.publish import QUESTION_ANSWERER_STEM, export_tflite_question_answerer
from albert_tf.squad import features as squad_features
from albert_tf.squad.examples import load_squad_json, read_squad_examples
from albert_tf.squad.prediction import answer_and_score, raw_results
from albert_tf.training.evaluated_training import read_best_metrics

# What --do_predict writes into --output_dir.
PREDICTION_FILES = ("predictions.json", "nbest_predictions.json", "null_odds.json", "eval_results.json")


class SquadData:
    """One SQuAD file read, featurized (cached) and ready to batch."""

    def __init__(self, flags, flag_name, is_training, tokenizer, cache_dir):
        self.flags = flags
        path = flags[flag_name].value
        try:
            self.examples = read_squad_examples(path, is_training, flags.version_2_with_negative)
            self.dataset_json = None if is_training else load_squad_json(path)
            self.path, self.stats = squad_features.cached_features(
                path, self.examples, tokenizer, cache_dir, flags.max_seq_length, flags.doc_stride,
                flags.max_query_length, is_training, flags.version_2_with_negative)
            # No windows: every question skipped, or on a paragraph that is empty or does not align.
            what = "trainable questions" if is_training else "questions to answer"
            require(self.stats["num_features"], f"--{flag_name}: no {what} in {path} (of {len(self.examples)} "
                    f"read, {self.stats['num_dropped_examples']} on paragraphs that are empty or do not align)")
        except (ValueError, FileNotFoundError) as error:
            raise UsageError(f"--{flag_name}: {flag_text(error)}") from None
        logging.info("%s: %s", path, self.stats)
        self.features = None if is_training else squad_features.read_features(self.path)

    def dataset(self, batch_size, training=False):
        return squad_features.make_dataset(self.path, batch_size, self.flags.max_seq_length, training=training,
                                           seed=self.flags.seed)

    def has_answers(self):
        """Whether the file has gold answers to score against (the dev files do, test files not)."""
        return any(qa.get("answers") for article in self.dataset_json for paragraph in article["paragraphs"]
                   for qa in paragraph["qas"])


class SquadTask(FineTuningTask):
    """SQuAD 1.1, or 2.0 with `--version_2_with_negative`."""

    selection_metric = "f1"

    def __init__(self, flag_values):
        super().__init__(flag_values)
        version = "2.0" if flag_values.version_2_with_negative else "1.1"
        self.name = f"SQuAD {version}"
        self.version = version
        self.dev = None

    @property
    def settings_name(self):
        return f"squad v{self.version}"  # as run_settings.json has recorded it from the start

    def check_flags(self):
        flags = self.flags
        require(flags.do_train or flags.do_predict or self.exports(),
                "nothing to do: give at least one of --do_train, --do_predict, --export_dir, --export_tflite")
        require(not flags.do_train or flags.train_file, "--do_train needs --train_file")
        require(flags.predict_file or not flags.do_predict, "--do_predict needs --predict_file (the questions to answer)")
        require(flags.predict_file or not flags.do_train,
                "--do_train needs --predict_file (training evaluates on it to keep the best checkpoint)")
        for name in ("train_batch_size", "predict_batch_size", "save_checkpoints_steps", "keep_checkpoint_max",
                     "n_best_size", "max_answer_length", "doc_stride", "max_query_length", "start_n_top",
                     "end_n_top"):
            require(flags[name].value > 0, f"--{name} must be positive, got {flags[name].value}")
        require(flags.num_train_epochs > 0, f"--num_train_epochs must be positive, got {flags.num_train_epochs}")
        require(0 <= flags.warmup_proportion < 1,
                f"--warmup_proportion must be in [0, 1), got {flags.warmup_proportion}")
        require(flags.max_seq_length > flags.max_query_length + 3,
                f"--max_seq_length {flags.max_seq_length} leaves no room for the paragraph after "
                f"--max_query_length {flags.max_query_length} and [CLS] [SEP] [SEP]")
        require(flags.start_n_top <= flags.max_seq_length and flags.end_n_top <= flags.max_seq_length,
                "--start_n_top and --end_n_top must not exceed --max_seq_length")
        for name in ("spm_model_file", "albert_config_file"):
            require(tf.io.gfile.exists(flags[name].value), f"--{name}: {flags[name].value} does not exist")
        refuse_overwriting_inputs([("--output_dir", os.path.join(flags.output_dir, name)) for name in PREDICTION_FILES],
                                  [(f"--{name}", flags[name].value) for name in ("train_file", "predict_file")
                                   if flags[name].value])
        if flags.export_tflite is not None:
            check_tflite_output(flags.export_tflite, QUESTION_ANSWERER_STEM, flags.do_lower_case, "the Task Library")
            with flag_checked("export_tflite"):
                check_task_library_windows(flags.max_seq_length, flags.max_query_length)

    def check_config(self, config):
        if self.flags.export_tflite is not None:
            with flag_checked("export_tflite"):
                check_question_answerer(self.flags.version_2_with_negative, config)

    def head(self, backbone):
        model = AlbertQuestionAnswering(backbone=backbone, version_2_with_negative=self.flags.version_2_with_negative,
                                        start_n_top=self.flags.start_n_top, end_n_top=self.flags.end_n_top,
                                        dropout_rate=self.flags.dropout_prob)
        model(model.example_inputs(), training=False)  # creates the weights, to load or restore them
        return model

    def read_dev(self, tokenizer, cache_dir):
        if self.flags.do_train or self.flags.do_predict:  # an export alone reads no questions
            self.dev = SquadData(self.flags, "predict_file", False, tokenizer, cache_dir)

    def training_plan(self, tokenizer, cache_dir, seed):
        flags = self.flags
        train_data = SquadData(flags, "train_file", True, tokenizer, cache_dir)
        # As the original: steps from the number of questions, not of windows.
        train_steps = max(1, int(len(train_data.examples) / flags.train_batch_size * flags.num_train_epochs))
        require(self.dev.has_answers(),
                f"--predict_file {flags.predict_file} has no gold answers to pick the best checkpoint")
        return TrainingPlan(train_data.dataset(flags.train_batch_size, training=True), train_steps,
                            int(train_steps * flags.warmup_proportion),
                            min(flags.save_checkpoints_steps, train_steps),
                            f"--num_train_epochs={flags.num_train_epochs}")

    def answer(self, model):
        """(answers, nbest, null_odds, metrics) of `model` on --predict_file (`prediction.answer_and_score`)."""
        flags, dev = self.flags, self.dev
        results = raw_results(model, dev.dataset(flags.predict_batch_size), dev.features)
        return answer_and_score(flags.version_2_with_negative, dev.examples, dev.features, results,
                                dev.dataset_json if dev.has_answers() else None, flags.n_best_size,
                                flags.max_answer_length, flags.null_score_diff_threshold)

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
            write_json(os.path.join(self.flags.output_dir, name), value)
        logging.info("wrote %s to %s", ", ".join(outputs), self.flags.output_dir)
        if metrics is not None:
            print(f"{self.name} {self.flags.predict_file}: " + ", ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
        return metrics

    def export_threshold(self, predicted_metrics):
        """v2.0: the flag's threshold, else the one found on --predict_file (this run's, or the best
        checkpoint's)."""
        flags = self.flags
        if flags.null_score_diff_threshold is not None or not flags.version_2_with_negative:
            return flags.null_score_diff_threshold
        best = read_best_metrics(flags.output_dir)
        for metrics in (predicted_metrics, best and best["metrics"]):
            if metrics and metrics.get("null_score_diff_threshold") is not None:
                return metrics["null_score_diff_threshold"]
        raise UsageError("--export_dir of a SQuAD 2.0 model needs --null_score_diff_threshold, or --do_predict on a "
                         "--predict_file with answers, or a fine-tuned --output_dir")

    def exports(self):
        return bool(self.flags.export_dir or self.flags.export_tflite)

    def export(self, model, predicted_metrics):
        flags = self.flags

        def saved_models():
            return [self.export_saved_model(model, predicted_metrics)]

        def tflite_files():
            return export_tflite_question_answerer(model, flags.export_tflite, flags.spm_model_file)

        export_all([(LITERT, tflite_files if flags.export_tflite else None),
                    (SAVED_MODEL, saved_models if flags.export_dir else None)])

    def export_saved_model(self, model, predicted_metrics):
        flags = self.flags
        return export_squad(model, flags.spm_model_file, flags.export_dir, do_lower_case=flags.do_lower_case,
                            max_seq_length=flags.max_seq_length, doc_stride=flags.doc_stride,
                            max_query_length=flags.max_query_length, n_best_size=flags.n_best_size,
                            max_answer_length=flags.max_answer_length,
                            null_score_diff_threshold=self.export_threshold(predicted_metrics),
                            **export_options())
