"""What `albert-race` does (albert_cli/race.py defines its flags): read, featurize, train, evaluate, export."""

import os

import keras
import numpy as np
import tensorflow as tf
from absl import flags, logging

from albert_cli.fine_tuning_inputs import compute_dtype, start_task_run, trained_model
from albert_cli.request_bounds import request_bounds
from albert_cli.run_settings import check_run_settings, record_run_settings, run_settings
from albert_cli.cli import (UsageError, load_init_checkpoint, require,
                           require_positive_finite)
from albert_tf.checkpoints.model_files import write_model_files
from albert_tf.training.distribute import per_replica_batch_size
from albert_tf.training.evaluated_training import fine_tune, start_message
from albert_tf.glue.training import build_optimizer
from albert_tf.training import keras_predict
from albert_tf.io_utils import write_json
from albert_tf.models.multiple_choice_model import AlbertMultipleChoice
from albert_tf.race import features as race_features
from albert_tf.race.examples import LEVELS, read_race_examples
from albert_tf.serving.race_export import export_race

FLAGS = flags.FLAGS


def check_flags():
    require(FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir,
            "nothing to do: give at least one of --do_train, --do_eval, --do_predict, --export_dir")
    require(FLAGS.data_dir or not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict),
            "--data_dir is needed (the folder holding RACE/)")
    require(not (FLAGS.high_only and FLAGS.middle_only), "--high_only and --middle_only exclude each other")
    for name in ("train_batch_size", "eval_batch_size", "predict_batch_size", "train_step",
                 "save_checkpoints_steps", "keep_checkpoint_max", "max_qa_length"):
        require(FLAGS[name].value > 0, f"--{name} must be positive, got {FLAGS[name].value}")
    require(FLAGS.warmup_step >= 0, f"--warmup_step must be >= 0, got {FLAGS.warmup_step}")
    require_positive_finite("learning_rate", FLAGS.learning_rate)
    require(FLAGS.max_qa_length <= FLAGS.max_seq_length - 3,
            f"--max_qa_length {FLAGS.max_qa_length} leaves no room in --max_seq_length {FLAGS.max_seq_length} "
            "for [CLS] [SEP] [SEP]")
    for name in ("spm_model_file", "albert_config_file"):
        require(tf.io.gfile.exists(FLAGS[name].value), f"--{name}: {FLAGS[name].value} does not exist")


def levels():
    if FLAGS.high_only:
        return ("high",)
    if FLAGS.middle_only:
        return ("middle",)
    return LEVELS


class RaceSplit:
    """One split at one level, featurized (cached)."""

    def __init__(self, split, level, tokenizer, cache_dir):
        try:
            self.examples = read_race_examples(FLAGS.data_dir, split, (level,))
        except (ValueError, FileNotFoundError) as error:
            raise UsageError(f"--data_dir: {error}") from None
        self.level = level
        self.labels = np.array([example.label for example in self.examples])
        self.path = race_features.cached_features(self.examples, f"{split}-{level}", tokenizer, cache_dir,
                                                  FLAGS.max_seq_length, FLAGS.max_qa_length)

    def dataset(self, batch_size, training=False):
        return race_features.make_dataset(self.path, batch_size, FLAGS.max_seq_length, training=training,
                                          seed=FLAGS.seed)


def accuracies(model, splits, batch_size):
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


def build_model(config, strategy, init_checkpoint=None, dtype=None):
    keras.utils.set_random_seed(FLAGS.seed)
    with strategy.scope():
        model = AlbertMultipleChoice(config, dtype=dtype,
                                     kernels=FLAGS.kernels)
        model(model.example_inputs(), training=False)
    if init_checkpoint:
        load_init_checkpoint(model.albert, init_checkpoint, FLAGS.extend_positions)  # the encoder; the head starts fresh
    return model


def train(config, strategy, tokenizer, cache_dir, dev):
    train_data = [RaceSplit("train", level, tokenizer, cache_dir) for level in levels()]
    try:
        per_replica_batch_size(FLAGS.train_batch_size, strategy.num_replicas_in_sync)
    except ValueError as error:
        raise UsageError(f"--train_batch_size: {error}") from None
    dataset = race_features.make_dataset([split.path for split in train_data], FLAGS.train_batch_size,
                                         FLAGS.max_seq_length, training=True, seed=FLAGS.seed)
    model = build_model(config, strategy, FLAGS.init_checkpoint, compute_dtype(FLAGS.mixed_precision))
    logging.info(start_message(FLAGS.output_dir, FLAGS.train_step, f"--train_step={FLAGS.train_step}"))
    with strategy.scope():
        optimizer = build_optimizer(FLAGS.optimizer, FLAGS.learning_rate, FLAGS.train_step, FLAGS.warmup_step,
                                    FLAGS.mixed_precision)
        best = fine_tune(model, optimizer, dataset, lambda trained: accuracies(trained, dev, FLAGS.eval_batch_size)[0],
                         "accuracy", FLAGS.train_step, FLAGS.save_checkpoints_steps, FLAGS.output_dir,
                         keep_checkpoint_max=FLAGS.keep_checkpoint_max, jit_compile=FLAGS.jit_compile,
                         loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    write_model_files(FLAGS.output_dir, config, FLAGS.spm_model_file)  # beside the checkpoints, for every tool
    logging.info("best dev accuracy at step %d: %s", best["step"], best["metrics"])




def report(model, splits, batch_size, name):
    metrics, predictions = accuracies(model, splits, batch_size)
    write_json(os.path.join(FLAGS.output_dir, f"{name}_results.json"), metrics)
    print(f"RACE {name}: " + ", ".join(f"{key}={value:.4f}" for key, value in metrics.items()))
    return predictions


def export(model, config):
    exported = AlbertMultipleChoice(config)
    exported(exported.example_inputs(), training=False)
    exported.set_weights(model.get_weights())  # float32: portable to every TF Serving build and device
    path = export_race(exported, FLAGS.spm_model_file, FLAGS.export_dir, do_lower_case=FLAGS.do_lower_case,
                       max_seq_length=FLAGS.max_seq_length, max_qa_length=FLAGS.max_qa_length,
                       version=FLAGS.export_version, **request_bounds())
    print(f"exported the serving SavedModel to {path}")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    check_flags()
    tokenizer, config, strategy, cache_dir = start_task_run(FLAGS)
    settings = run_settings("race", FLAGS.max_seq_length, config)
    check_run_settings(FLAGS.output_dir, settings)
    dev = [RaceSplit("dev", level, tokenizer, cache_dir) for level in levels()] if (
        FLAGS.do_train or FLAGS.do_eval) else []
    if FLAGS.do_train:
        record_run_settings(FLAGS.output_dir, settings)
        train(config, strategy, tokenizer, cache_dir, dev)
    if not (FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir):
        return
    model = trained_model(FLAGS, lambda init: build_model(config, strategy, init))
    if FLAGS.do_eval:
        report(model, dev, FLAGS.eval_batch_size, "eval")
    if FLAGS.do_predict:
        test = [RaceSplit("test", level, tokenizer, cache_dir) for level in levels()]
        predictions = report(model, test, FLAGS.predict_batch_size, "test")
        rows = {split.level: split.examples for split in test}
        write_json(os.path.join(FLAGS.output_dir, "test_predictions.json"), {
            example.example_id: "ABCD"[int(choice)]
            for level, examples in rows.items() for example, choice in zip(examples, predictions[level])})
    if FLAGS.export_dir:
        export(model, config)
