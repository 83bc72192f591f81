"""Fine-tunes, evaluates and exports ALBERT on a GLUE task (TF2 port of the original's run_classifier.py).

    albert-classify --task_name=SST-2 --do_train --do_eval --train_step=300 \\
        --output_dir=output/glue/SST-2 --export_dir=output/glue/SST-2/export

(`python run_classifier.py ...` in a checkout). Defaults point at the bundled data (data/glue,
the official SentencePiece model, the tiny config). Evaluation runs every --save_checkpoints_steps
during training and keeps the best checkpoint by the task's metric (<output_dir>/best);
--seeds=N repeats training with N seeds and reports mean, standard deviation and best.
"""

import os
import sys

from albert_cli.cli import prefer_onednn
from albert_cli.tensorflow_logs import quiet_tensorflow

prefer_onednn()  # before TensorFlow loads
quiet_tensorflow()

from absl import flags, logging

from albert_cli.bundled import GLUE_SAMPLES
from albert_cli import export_version, request_bounds, task_flags
from albert_cli.export_version import check_export_version_is_new, define_export_version_flag
from albert_cli.output_lock import lock_output_dir
from albert_tf.choices import PADDING_MODES, TFLITE_QUANTIZATIONS
from albert_cli.cli import (UsageError, flag_text, load_init_checkpoint, require, require_output_dir,
                            require_positive_finite, require_recompute_trainable, run_main, settle_kernels,
                            start_determinism)
from albert_tf.glue.recipes import paper_recipe
from albert_tf.glue.tasks import AX, TASKS, get_task
from albert_tf.io_utils import write_json
from albert_tf.kernels import EXPORT_KERNEL_SETS

# TensorFlow and the modules that need it are imported where they are used, so that --help and
# the flag checks answer at once.

FLAGS = flags.FLAGS

task_flags.define_task_flags(output_dir="output/glue")
flags.adopt_module_key_flags(task_flags)  # shown by --help
flags.DEFINE_string("task_name", "SST-2", f"GLUE task, one of {', '.join(TASKS)} (case-insensitive).")
flags.DEFINE_string("data_dir", GLUE_SAMPLES, "GLUE directory: <data_dir>/<TASK>/{train,dev,test}.tsv "
                    "(default: the bundled samples).")
flags.DEFINE_string("tfds_data_dir", None, "Read glue/<task> from this prepared TFDS directory instead.")
flags.DEFINE_integer("max_seq_length", 512, "Longest packed sequence; longer inputs are truncated.", lower_bound=3)
flags.DEFINE_bool("do_train", False, "Fine-tune on the train split.")
flags.DEFINE_bool("do_eval", False, "Report dev metrics (of the best checkpoint when training).")
flags.DEFINE_bool("do_predict", False, "Write GLUE submission files for the test split(s).")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch size.", lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 32, "Batch size for evaluation and prediction.", lower_bound=1)
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_integer("train_step", 1000, "Number of training steps.", lower_bound=1)
flags.DEFINE_integer("warmup_step", 0, "Linear warmup steps.", lower_bound=0)
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Evaluate and checkpoint every this many steps.", lower_bound=1)
flags.DEFINE_enum("export_kernels", "reference", EXPORT_KERNEL_SETS,
                  "Kernel set the export is traced with (plain TF ops only: what every TF Serving build runs).")
flags.DEFINE_string("export_dir", None, "Write a TF Serving SavedModel (<export_dir>/<version>/).")
define_export_version_flag()
flags.adopt_module_key_flags(export_version)  # shown by --help
request_bounds.define_request_bound_flags()
flags.adopt_module_key_flags(request_bounds)
flags.DEFINE_string("export_tflite", None, "Write LiteRT models of the classifier (float32 and dynamic-range int8) "
                    "that MediaPipe's TextClassifier runs on raw text to this directory (single-text tasks).")
flags.DEFINE_integer("tflite_seq_length", 128, "With --export_tflite: the tokens of the models' input shape; "
                     "MediaPipe truncates and pads every text to it.", lower_bound=3)
flags.DEFINE_enum("export_serving_tflite", None, list(TFLITE_QUANTIZATIONS),
                  "With --export_dir: also put the classifier's LiteRT model (float32 or dynamic-range int8 "
                  "weights) in the version directory as model.tflite, which TF Serving serves instead of the "
                  "TensorFlow graph with --prefer_tflite_model=true (token ids in, logits out).")
flags.DEFINE_enum("recipe", "none", ["none", "paper"],
                  "`paper`: the original's per-task hyperparameters (explicit flags still win).")
flags.DEFINE_bool("recompute", False, "Keep only each Transformer block's input for the backward pass and "
                  "recompute the rest there: less memory, about one more forward pass of time (needs dropout 0).")
flags.DEFINE_integer("seeds", 1, "Train with this many seeds (seed, seed+1, ...); report mean/std/best.", lower_bound=1)
flags.DEFINE_bool("reinit_pooler", False, "Re-initialise the pooler after loading --init_checkpoint "
                  "instead of keeping its pretrained weights (the original keeps them).")
flags.DEFINE_enum("padding", "dynamic", PADDING_MODES,
                  "`dynamic`: pad each batch to its longest row; `bucketed`: also batch training rows "
                  "of similar length together (faster, other batches); `fixed`: to max_seq_length.")


def apply_recipe(task):
    if FLAGS.recipe != "paper":
        return
    recipe = paper_recipe(task)
    for name, value in recipe.items():
        if not FLAGS[name].present:
            FLAGS[name].value = value
    # The values in effect: explicit flags win over the recipe.
    logging.info("recipe paper for %s: %s", task.name, ", ".join(
        f"{name}={FLAGS[name].value}" + (" (flag)" if FLAGS[name].present else "") for name in recipe))


flags.register_multi_flags_validator(
    ["export_serving_tflite", "export_dir"], lambda values: not values["export_serving_tflite"] or values["export_dir"],
    message="--export_serving_tflite writes into the SavedModel of --export_dir: give --export_dir too")
flags.register_multi_flags_validator(
    ["do_train", "do_eval", "do_predict", "export_dir", "export_tflite"], lambda values: any(values.values()),
    message="nothing to do: give at least one of --do_train, --do_eval, --do_predict, --export_dir, --export_tflite")
for _name in ("spm_model_file", "albert_config_file"):
    flags.register_validator(_name, lambda path: "://" in path or os.path.exists(path), message="file does not exist")


class SplitData:
    """One split read, featurized (cached) and ready to batch."""

    def __init__(self, task, split, tokenizer, cache_dir):
        from albert_tf.glue import features as glue_features  # pylint: disable=g-import-not-at-top
        from albert_tf.glue.examples import read_examples  # pylint: disable=g-import-not-at-top

        self.task = task
        example_set = read_examples(task, split, FLAGS.data_dir, FLAGS.tfds_data_dir)
        require(example_set.examples, f"{example_set.source}: no examples")
        self.examples = example_set.examples
        self.path = glue_features.cached_features(
            task, split, example_set, tokenizer, FLAGS.max_seq_length, cache_dir)
        self.labels = [glue_features.label_value(task, example.label) for example in self.examples]

    def dataset(self, batch_size, training=False, seed=None):
        from albert_tf.glue import features as glue_features  # pylint: disable=g-import-not-at-top

        return glue_features.make_dataset(
            self.task, self.path, batch_size, FLAGS.max_seq_length, padding=FLAGS.padding,
            training=training, seed=seed)


def compute_dtype():
    return None if FLAGS.mixed_precision == "float32" else FLAGS.mixed_precision


def build_classifier(task, config, strategy, seed, init_checkpoint=None):
    import keras  # pylint: disable=g-import-not-at-top

    from albert_tf import AlbertClassifier, AlbertModel  # pylint: disable=g-import-not-at-top

    keras.utils.set_random_seed(seed)
    with strategy.scope():
        backbone = AlbertModel(config, dtype=compute_dtype(), recompute=FLAGS.recompute, name="albert",
                               kernels=FLAGS.kernels)
        classifier = AlbertClassifier(backbone=backbone, num_labels=task.num_labels)
    if init_checkpoint:
        load_init_checkpoint(classifier, init_checkpoint, FLAGS.extend_positions)
        if FLAGS.reinit_pooler:
            classifier.albert.reset_pooler()
    return classifier


def start_message(output_dir):
    """One line: what `output_dir` holds and what fine-tuning will do with it."""
    from albert_tf.training import evaluated_training  # pylint: disable=g-import-not-at-top

    return evaluated_training.start_message(output_dir, FLAGS.train_step, f"--train_step={FLAGS.train_step}")


def train_one_seed(task, config, strategy, seed, train_data, eval_sets, output_dir):
    from albert_tf.checkpoints.model_files import write_model_files  # pylint: disable=g-import-not-at-top
    from albert_tf.glue import training  # pylint: disable=g-import-not-at-top

    sys.stderr.write(start_message(output_dir) + "\n")
    classifier = build_classifier(task, config, strategy, seed, FLAGS.init_checkpoint)
    with strategy.scope():
        optimizer = training.build_optimizer(
            FLAGS.optimizer, FLAGS.learning_rate, FLAGS.train_step, FLAGS.warmup_step,
            FLAGS.mixed_precision)
        best = training.fine_tune(
            task, classifier, optimizer, train_data.dataset(FLAGS.train_batch_size, training=True, seed=seed),
            eval_sets, FLAGS.train_step, FLAGS.save_checkpoints_steps, output_dir,
            keep_checkpoint_max=FLAGS.keep_checkpoint_max, jit_compile=FLAGS.jit_compile)
    write_model_files(output_dir, config, FLAGS.spm_model_file)  # beside the checkpoints, for every tool
    logging.info("seed %d: best %s at step %d: %s", seed, task.selection_metric, best["step"], best["metrics"])
    return best


def trained_classifier(task, config, strategy, output_dir):
    """The classifier to evaluate/predict/export: the best of training, else --init_checkpoint."""
    from albert_tf.training import evaluated_training  # pylint: disable=g-import-not-at-top

    fine_tuned = evaluated_training.read_best_metrics(output_dir) is not None
    require(fine_tuned or FLAGS.init_checkpoint,
            f"--output_dir {output_dir} holds no fine-tuned model (run with --do_train) and no "
            "--init_checkpoint was given")
    # The fine-tuned weights replace all of --init_checkpoint's: reading it again would be wasted.
    classifier = build_classifier(task, config, strategy, FLAGS.seed, None if fine_tuned else FLAGS.init_checkpoint)
    if fine_tuned:
        evaluated_training.restore_best(classifier, output_dir)
        logging.info("using %s", evaluated_training.best_model_text(output_dir, task.selection_metric))
    return classifier


def predict(task, classifier, tokenizer, cache_dir):
    from albert_tf.glue import training  # pylint: disable=g-import-not-at-top
    from albert_tf.glue.submission import write_submission  # pylint: disable=g-import-not-at-top

    model = training.logits_model(classifier)
    submission_dir = os.path.join(FLAGS.output_dir, "submission")
    jobs = [(task, stem, split) for stem, split in task.submissions]
    if task.name == "MNLI":
        jobs.append((AX, AX.name, "test"))  # GLUE's diagnostic set is predicted by the MNLI model
    for job_task, stem, split in jobs:
        try:
            data = SplitData(job_task, split, tokenizer, cache_dir)
        except (UsageError, ValueError, FileNotFoundError) as error:
            if job_task is not AX:
                raise
            logging.warning("AX diagnostic set not written: %s", error)
            continue
        logits = training.predict_logits(model, data.dataset(FLAGS.eval_batch_size), f"predicting {stem}")
        path = write_submission(job_task, stem, data.examples, logits, submission_dir)
        logging.info("wrote %s (%d rows)", path, len(data.examples))


def export(task, classifier, config):
    from albert_tf import AlbertClassifier  # pylint: disable=g-import-not-at-top
    from albert_tf.serving.classifier_export import export_classifier  # pylint: disable=g-import-not-at-top

    if compute_dtype():  # serve in float32: portable to every TF Serving build and device
        exported = AlbertClassifier(config, task.num_labels)
        exported.set_weights(classifier.get_weights())
        classifier = exported
    path = export_classifier(classifier, task, FLAGS.spm_model_file, FLAGS.export_dir,
                             do_lower_case=FLAGS.do_lower_case, max_seq_length=FLAGS.max_seq_length,
                             version=FLAGS.export_version, kernels=FLAGS.export_kernels,
                             tflite_quantization=FLAGS.export_serving_tflite, **request_bounds.request_bounds())
    print(f"exported the serving SavedModel to {path}")


def check_mediapipe_task(task):
    """--export_tflite writes MediaPipe's form: one lowercased text in, class probabilities out."""
    from albert_tf.serving.mediapipe_export import check_single_text_task  # pylint: disable=g-import-not-at-top

    try:
        check_single_text_task(task)
    except ValueError as error:
        raise UsageError(f"--export_tflite: {error}; its SavedModel (--export_dir) serves it") from None
    require(FLAGS.do_lower_case, "--export_tflite: MediaPipe lowercases every text, and a --do_lower_case=false "
            "model would read other tokens than it was trained on")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    from albert_cli.fine_tuning_inputs import load_tokenizer_and_config  # pylint: disable=g-import-not-at-top
    from albert_tf.training import evaluated_training  # pylint: disable=g-import-not-at-top
    from albert_tf.training.distribute import get_strategy, per_replica_batch_size  # pylint: disable=g-import-not-at-top
    from albert_tf.glue import training  # pylint: disable=g-import-not-at-top
    from albert_tf.glue.metrics import majority_baseline  # pylint: disable=g-import-not-at-top

    start_determinism(FLAGS)
    task = get_task(FLAGS.task_name)
    apply_recipe(task)
    require_positive_finite("learning_rate", FLAGS.learning_rate)
    if FLAGS.export_dir is not None:
        require_output_dir("export_dir", FLAGS.export_dir, create=False)
        check_export_version_is_new(FLAGS.export_dir, FLAGS.export_version)
    if FLAGS.export_tflite is not None:
        from albert_tf.serving.tflite_export import refuse_existing, tflite_paths  # pylint: disable=g-import-not-at-top

        require_output_dir("export_tflite", FLAGS.export_tflite, create=False)
        try:
            refuse_existing(tflite_paths(FLAGS.export_tflite))
        except ValueError as error:
            raise UsageError(f"--export_tflite: {error}") from None
        check_mediapipe_task(task)
    tokenizer, config = load_tokenizer_and_config(FLAGS)
    if FLAGS.export_tflite is not None:
        from albert_tf.serving.mediapipe_export import check_seq_length  # pylint: disable=g-import-not-at-top

        try:
            check_seq_length(FLAGS.tflite_seq_length, config)
        except ValueError as error:
            raise UsageError(f"--tflite_seq_length: {error}") from None
    if FLAGS.recompute and FLAGS.do_train:
        require_recompute_trainable(config)
    try:
        strategy = get_strategy(FLAGS.strategy, tpu_address=FLAGS.tpu_name)
    except ValueError as error:
        raise UsageError(f"--strategy: {error}") from None
    settle_kernels(FLAGS)
    if FLAGS.do_train:
        try:
            per_replica_batch_size(FLAGS.train_batch_size, strategy.num_replicas_in_sync)
        except ValueError as error:
            raise UsageError(f"--train_batch_size: {error}") from None
    require_output_dir("output_dir", FLAGS.output_dir)
    lock_output_dir("output_dir", FLAGS.output_dir)
    cache_dir = FLAGS.cached_dir or os.path.join(FLAGS.output_dir, "features")

    eval_sets = []
    if FLAGS.do_train or FLAGS.do_eval:
        for prefix, split in task.eval_splits:
            data = SplitData(task, split, tokenizer, cache_dir)
            eval_sets.append(training.EvalSet(prefix, data.dataset(FLAGS.eval_batch_size), data.labels))

    output_dir = FLAGS.output_dir
    train_data = None
    if FLAGS.do_train:
        train_data = SplitData(task, "train", tokenizer, cache_dir)
        seeds = [FLAGS.seed + i for i in range(FLAGS.seeds)]
        records = []
        for seed in seeds:
            seed_dir = FLAGS.output_dir if len(seeds) == 1 else os.path.join(FLAGS.output_dir, f"seed_{seed}")
            tf.io.gfile.makedirs(seed_dir)
            try:
                best = train_one_seed(task, config, strategy, seed, train_data, eval_sets, seed_dir)
            except evaluated_training.FineTuningDiverged as error:
                sys.stderr.write(f"error: {flag_text(error)}\n")  # as run_pretraining: exit 1, not a usage error
                sys.exit(1)
            records.append(dict(best, seed=seed, output_dir=seed_dir))
        if len(seeds) > 1:
            summary = training.summarize_seeds(task, records)
            summary["runs"] = records
            write_json(os.path.join(FLAGS.output_dir, "seeds_summary.json"), summary)
            logging.info("over %d seeds: %s", len(seeds), {k: v for k, v in summary.items() if k != "runs"})
        best_record = max(records, key=lambda record: record["metrics"][task.selection_metric])
        output_dir = best_record["output_dir"]

    if not (FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir or FLAGS.export_tflite):
        return
    classifier = trained_classifier(task, config, strategy, output_dir)
    if FLAGS.do_eval:
        with strategy.scope():
            metrics = training.evaluate(task, training.logits_model(classifier), eval_sets)
        if train_data is not None:  # what "learning nothing" scores, for context
            for eval_set in eval_sets:
                baseline = majority_baseline(task, train_data.labels, eval_set.labels)
                metrics.update({f"majority_baseline_{eval_set.prefix}{k}": v for k, v in baseline.items()})
        write_json(os.path.join(FLAGS.output_dir, "eval_results.json"), metrics)
        print(f"{task.name} dev: " + ", ".join(f"{name}={value:.4f}" for name, value in metrics.items()))
    if FLAGS.do_predict:
        predict(task, classifier, tokenizer, cache_dir)
    if FLAGS.export_dir:
        export(task, classifier, config)
    if FLAGS.export_tflite:
        from albert_tf.serving.tflite_export import export_tflite  # pylint: disable=g-import-not-at-top

        paths = export_tflite(classifier, FLAGS.export_tflite, FLAGS.spm_model_file, task.labels,
                              seq_length=FLAGS.tflite_seq_length)
        print(f"wrote the LiteRT models {', '.join(paths)}")


def console_main():
    """The `albert-classify` command."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
