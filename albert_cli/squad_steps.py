"""What `albert-squad` does (albert_cli/squad.py defines its flags): read, featurize, train, predict, export."""

import os

import keras
import tensorflow as tf
from absl import flags, logging

from albert_cli.fine_tuning_inputs import compute_dtype, start_task_run, trained_model
from albert_cli.request_bounds import request_bounds
from albert_cli.run_settings import check_run_settings, record_run_settings, run_settings
from albert_cli.cli import (UsageError, flag_text, load_init_checkpoint, require,
                            require_positive_finite, require_recompute_trainable)
from albert_tf.checkpoints.model_files import write_model_files
from albert_tf.training.distribute import per_replica_batch_size
from albert_tf.training.evaluated_training import fine_tune, read_best_metrics, start_message
from albert_tf.glue.training import build_optimizer
from albert_tf.io_utils import refuse_overwriting_inputs, write_json
from albert_tf.models.albert_model import AlbertModel
from albert_tf.models.question_answering_model import AlbertQuestionAnswering
from albert_tf.serving.squad_export import export_squad
from albert_tf.squad import features as squad_features
from albert_tf.squad.examples import load_squad_json, read_squad_examples
from albert_tf.squad.prediction import answer_and_score, raw_results

FLAGS = flags.FLAGS
# What --do_predict writes into --output_dir.
PREDICTION_FILES = ("predictions.json", "nbest_predictions.json", "null_odds.json", "eval_results.json")


def check_flags():
    require(FLAGS.do_train or FLAGS.do_predict or FLAGS.export_dir,
            "nothing to do: give at least one of --do_train, --do_predict, --export_dir")
    require(not FLAGS.do_train or FLAGS.train_file, "--do_train needs --train_file")
    require(FLAGS.predict_file, "--predict_file is needed (training evaluates on it to keep the best checkpoint)")
    for name in ("train_batch_size", "predict_batch_size", "save_checkpoints_steps", "keep_checkpoint_max",
                 "n_best_size", "max_answer_length", "doc_stride", "max_query_length", "start_n_top", "end_n_top"):
        require(FLAGS[name].value > 0, f"--{name} must be positive, got {FLAGS[name].value}")
    require_positive_finite("learning_rate", FLAGS.learning_rate)
    require(FLAGS.num_train_epochs > 0, f"--num_train_epochs must be positive, got {FLAGS.num_train_epochs}")
    require(0 <= FLAGS.warmup_proportion < 1, f"--warmup_proportion must be in [0, 1), got {FLAGS.warmup_proportion}")
    require(FLAGS.max_seq_length > FLAGS.max_query_length + 3,
            f"--max_seq_length {FLAGS.max_seq_length} leaves no room for the paragraph after "
            f"--max_query_length {FLAGS.max_query_length} and [CLS] [SEP] [SEP]")
    require(FLAGS.start_n_top <= FLAGS.max_seq_length and FLAGS.end_n_top <= FLAGS.max_seq_length,
            "--start_n_top and --end_n_top must not exceed --max_seq_length")
    for name in ("spm_model_file", "albert_config_file"):
        require(tf.io.gfile.exists(FLAGS[name].value), f"--{name}: {FLAGS[name].value} does not exist")
    refuse_overwriting_inputs([("--output_dir", os.path.join(FLAGS.output_dir, name)) for name in PREDICTION_FILES],
                              [(f"--{name}", FLAGS[name].value) for name in ("train_file", "predict_file")
                               if FLAGS[name].value])


class SquadData:
    """One SQuAD file read, featurized (cached) and ready to batch."""

    def __init__(self, flag_name, is_training, tokenizer, cache_dir):
        path = FLAGS[flag_name].value
        try:
            self.examples = read_squad_examples(path, is_training, FLAGS.version_2_with_negative)
            self.dataset_json = None if is_training else load_squad_json(path)
            self.path, self.stats = squad_features.cached_features(
                path, self.examples, tokenizer, cache_dir, FLAGS.max_seq_length, FLAGS.doc_stride,
                FLAGS.max_query_length, is_training, FLAGS.version_2_with_negative)
            # No windows: every question skipped, or on a paragraph that is empty or does not align.
            what = "trainable questions" if is_training else "questions to answer"
            require(self.stats["num_features"], f"--{flag_name}: no {what} in {path} (of {len(self.examples)} "
                    f"read, {self.stats['num_dropped_examples']} on paragraphs that are empty or do not align)")
        except (ValueError, FileNotFoundError) as error:
            raise UsageError(f"--{flag_name}: {flag_text(error)}") from None
        logging.info("%s: %s", path, self.stats)
        self.features = None if is_training else squad_features.read_features(self.path)

    def dataset(self, batch_size, training=False):
        return squad_features.make_dataset(self.path, batch_size, FLAGS.max_seq_length, training=training,
                                           seed=FLAGS.seed)

    def has_answers(self):
        """Whether the file has gold answers to score against (the dev files do, test files not)."""
        return any(qa.get("answers") for article in self.dataset_json for paragraph in article["paragraphs"]
                   for qa in paragraph["qas"])


def build_model(config, strategy, init_checkpoint=None, dtype=None, recompute=False):
    keras.utils.set_random_seed(FLAGS.seed)
    with strategy.scope():
        backbone = AlbertModel(config, dtype=dtype, recompute=recompute, name="albert",
                               kernels=FLAGS.kernels)
        model = AlbertQuestionAnswering(backbone=backbone, version_2_with_negative=FLAGS.version_2_with_negative,
                                        start_n_top=FLAGS.start_n_top, end_n_top=FLAGS.end_n_top,
                                        dropout_rate=FLAGS.dropout_prob)
        model(model.example_inputs(), training=False)  # creates the weights, to load or restore them
    if init_checkpoint:
        load_init_checkpoint(model.albert, init_checkpoint, FLAGS.extend_positions)  # the encoder; the head starts fresh
    return model


def answer(model, data, threshold=None):
    """(answers, nbest, null_odds, metrics) of `model` on `data` (see `prediction.answer_and_score`)."""
    results = raw_results(model, data.dataset(FLAGS.predict_batch_size), data.features)
    return answer_and_score(FLAGS.version_2_with_negative, data.examples, data.features, results,
                            data.dataset_json if data.has_answers() else None, FLAGS.n_best_size,
                            FLAGS.max_answer_length, threshold)


def train(config, strategy, tokenizer, cache_dir, dev):
    train_data = SquadData("train_file", True, tokenizer, cache_dir)
    try:
        per_replica_batch_size(FLAGS.train_batch_size, strategy.num_replicas_in_sync)
    except ValueError as error:
        raise UsageError(f"--train_batch_size: {error}") from None
    # As the original: steps from the number of questions, not of windows.
    train_steps = max(1, int(len(train_data.examples) / FLAGS.train_batch_size * FLAGS.num_train_epochs))
    warmup_steps = int(train_steps * FLAGS.warmup_proportion)
    require(dev.has_answers(), f"--predict_file {FLAGS.predict_file} has no gold answers to pick the best checkpoint")
    model = build_model(config, strategy, FLAGS.init_checkpoint, compute_dtype(FLAGS.mixed_precision),
                        recompute=FLAGS.recompute)

    def evaluate(trained):
        return answer(trained, dev, FLAGS.null_score_diff_threshold)[3]

    logging.info(start_message(FLAGS.output_dir, train_steps, f"--num_train_epochs={FLAGS.num_train_epochs}"))
    with strategy.scope():
        optimizer = build_optimizer(FLAGS.optimizer, FLAGS.learning_rate, train_steps, warmup_steps,
                                    FLAGS.mixed_precision)
        best = fine_tune(model, optimizer, train_data.dataset(FLAGS.train_batch_size, training=True), evaluate,
                         "f1", train_steps, min(FLAGS.save_checkpoints_steps, train_steps), FLAGS.output_dir,
                         keep_checkpoint_max=FLAGS.keep_checkpoint_max, jit_compile=FLAGS.jit_compile)
    write_model_files(FLAGS.output_dir, config, FLAGS.spm_model_file)  # beside the checkpoints, for every tool
    logging.info("trained %d steps (%d warmup); best F1 at step %d: %s", train_steps, warmup_steps, best["step"],
                 best["metrics"])




def export_threshold(predicted_metrics):
    """v2.0: the flag's threshold, else the one found on --predict_file (this run's, or the best checkpoint's)."""
    if FLAGS.null_score_diff_threshold is not None or not FLAGS.version_2_with_negative:
        return FLAGS.null_score_diff_threshold
    best = read_best_metrics(FLAGS.output_dir)
    for metrics in (predicted_metrics, best and best["metrics"]):
        if metrics and metrics.get("null_score_diff_threshold") is not None:
            return metrics["null_score_diff_threshold"]
    raise UsageError("--export_dir of a SQuAD 2.0 model needs --null_score_diff_threshold, or --do_predict on a "
                     "--predict_file with answers, or a fine-tuned --output_dir")


def export(model, config, threshold):
    exported = AlbertQuestionAnswering(config, version_2_with_negative=FLAGS.version_2_with_negative,
                                       start_n_top=FLAGS.start_n_top, end_n_top=FLAGS.end_n_top)
    exported(exported.example_inputs(), training=False)
    exported.set_weights(model.get_weights())  # float32: portable to every TF Serving build and device
    path = export_squad(exported, FLAGS.spm_model_file, FLAGS.export_dir, do_lower_case=FLAGS.do_lower_case,
                        max_seq_length=FLAGS.max_seq_length, doc_stride=FLAGS.doc_stride,
                        max_query_length=FLAGS.max_query_length, n_best_size=FLAGS.n_best_size,
                        max_answer_length=FLAGS.max_answer_length, null_score_diff_threshold=threshold,
                        version=FLAGS.export_version, **request_bounds())
    print(f"exported the serving SavedModel to {path}")


def predict(model, dev):
    answers, nbest, null_odds, metrics = answer(model, dev, FLAGS.null_score_diff_threshold)
    outputs = {"predictions.json": answers, "nbest_predictions.json": nbest}
    if null_odds is not None:
        outputs["null_odds.json"] = null_odds
    if metrics is not None:
        outputs["eval_results.json"] = metrics
    for name, value in outputs.items():
        write_json(os.path.join(FLAGS.output_dir, name), value)
    logging.info("wrote %s to %s", ", ".join(outputs), FLAGS.output_dir)
    if metrics is not None:
        print("SQuAD %s %s: %s" % ("2.0" if FLAGS.version_2_with_negative else "1.1", FLAGS.predict_file,
                                   ", ".join(f"{k}={v:.4f}" for k, v in metrics.items())))
    return metrics


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    check_flags()
    tokenizer, config, strategy, cache_dir = start_task_run(FLAGS)
    if FLAGS.recompute and FLAGS.do_train:
        require_recompute_trainable(config)
    settings = run_settings("squad v2.0" if FLAGS.version_2_with_negative else "squad v1.1", FLAGS.max_seq_length,
                            config)
    check_run_settings(FLAGS.output_dir, settings)
    dev = SquadData("predict_file", False, tokenizer, cache_dir)
    if FLAGS.do_train:
        record_run_settings(FLAGS.output_dir, settings)
        train(config, strategy, tokenizer, cache_dir, dev)
    if not (FLAGS.do_predict or FLAGS.export_dir):
        return
    model = trained_model(FLAGS, lambda init: build_model(config, strategy, init))
    metrics = predict(model, dev) if FLAGS.do_predict else None
    if FLAGS.export_dir:
        export(model, config, export_threshold(metrics))
