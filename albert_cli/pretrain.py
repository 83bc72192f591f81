"""ALBERT pretraining (MLM + SOP) on today's TensorFlow: one device, GPUs, workers or a TPU.

With no flags it pretrains configs/albert_tiny.json for a few minutes on the bundled corpus
sample (TFRecords built into the output directory, two documents held out for evaluation).
The original's recipe: `--flagfile=configs/pretraining_paper.flags`. Bundled flag files and
configs are found by name: `configs/...` and `data/...` mean the copies installed with
albert-tf wherever no such file exists in the current directory.

    albert-pretrain
    albert-pretrain --flagfile=configs/pretraining_paper.flags \\
        --input_file=gs://bucket/data/*.tfrecord --output_dir=gs://bucket/albert_base \\
        --strategy=tpu --tpu_name=my-tpu

(`python run_pretraining.py ...` in a checkout.)
"""

import contextlib
import math
import os
import sys

from absl import flags

from albert_cli.bundled import SPM_MODEL, TINY_CONFIG
from albert_cli.output_lock import lock_output_dir
from albert_cli.pretraining_summary import metrics_text, summary_lines
from albert_tf.choices import OPTIMIZER_NAMES, PRECISION_POLICIES, STRATEGY_NAMES
from albert_cli.cli import (TERMINATED_EXIT_CODE, UsageError, flag_text, prefer_onednn, require, require_output_dir,
                            require_recompute_trainable, run_main, settle_kernels, usage_errors)
from albert_tf.error_text import error_line
from albert_tf.training.checkpoint_saving import remove_checkpoint_partials
from albert_tf.json_text import parse_json
from albert_tf.sigterm import on_sigterm
from albert_tf.kernels import KERNELS_FLAG_VALUES
from albert_cli.task_flags import define_extend_positions
from albert_cli.tensorflow_logs import quiet_tensorflow

prefer_onednn()  # before TensorFlow loads
quiet_tensorflow()

SUMMARY_FILE = "pretraining_summary.json"

# --- The original's flags (defaults: the bundled tiny run; the original's are in the help and
# in configs/pretraining_paper.flags).
flags.DEFINE_string("albert_config_file", TINY_CONFIG, "Model config JSON (default: the bundled configs/albert_tiny.json). Original: required.")
flags.DEFINE_string("input_file", None, "Training TFRecords: comma-separated paths/globs. Default: built from the bundled corpus sample. Original: required.")
flags.DEFINE_string("output_dir", "output/pretraining", "Checkpoints, TensorBoard logs, metrics.jsonl, summary. Original: required.")
flags.DEFINE_string("init_checkpoint", None, "Start from this checkpoint: an original TF1 one or ours (weights only).")
flags.DEFINE_bool("init_checkpoint_strict", True, "Every model variable must be in --init_checkpoint and every weight there used.")
flags.DEFINE_integer("max_seq_length", 64, "Sequence length of the TFRecords. Original: 512.", lower_bound=1)
flags.DEFINE_integer("max_predictions_per_seq", 10, "Masked positions per sequence in the TFRecords. Original: 20.", lower_bound=1)
flags.DEFINE_bool("do_train", True, "Train. Original: True.")
flags.DEFINE_bool("do_eval", True, "Evaluate after training (on --eval_input_file). Original: False.")
flags.DEFINE_integer("train_batch_size", 32, "GLOBAL batch (all replicas, all accumulation steps). Original: 4096.", lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 32, "Global evaluation batch. Original: 64.", lower_bound=1)
flags.DEFINE_enum("optimizer", "lamb", OPTIMIZER_NAMES, "Original: lamb.")
flags.DEFINE_float("learning_rate", 0.01, "Peak learning rate. Original: 0.00176 (for batch 4096).")
flags.DEFINE_float("poly_power", 1.0, "Power of the polynomial decay. Original: 1.0.")
flags.DEFINE_integer("num_train_steps", 1000, "Optimizer steps. Original: 125000.", lower_bound=1)
flags.DEFINE_integer("num_warmup_steps", 100, "Linear warmup steps. Original: 3125.", lower_bound=0)
flags.DEFINE_integer("start_warmup_step", 0, "Step at which warmup starts. Original: 0.", lower_bound=0)
flags.DEFINE_integer("save_checkpoints_steps", 200, "Checkpoint every this many steps (at loop ends). Original: 5000.", lower_bound=1)
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints kept. Original: 5.", lower_bound=1)
flags.DEFINE_integer("iterations_per_loop", 20, "Steps per tf.function call; also how often metrics are logged and SIGTERM is noticed. Original: 1000.", lower_bound=1)
flags.DEFINE_integer("max_eval_steps", 100, "At most this many evaluation batches. Original: 100.", lower_bound=1)
flags.DEFINE_integer("eval_every_steps", None, "With --do_eval, evaluate on the held-out set during training every this many steps (at loop ends). Default: at each checkpoint.", lower_bound=1)
define_extend_positions()
flags.DEFINE_bool("init_from_group0", False, "Initialise every group of a multi-group model from group 0 of --init_checkpoint.")
flags.DEFINE_bool("use_tpu", False, "The original's switch; same as --strategy=tpu.")
flags.DEFINE_string("tpu_name", None, "Cloud TPU name or grpc:// address (--strategy=tpu).")
flags.DEFINE_string("tpu_zone", None, "Cloud TPU zone.")
flags.DEFINE_string("gcp_project", None, "Cloud project of the TPU.")
flags.DEFINE_string("master", None, "TPU master address; used when --tpu_name is not given.")
# --- Ours.
flags.DEFINE_enum("strategy", None, STRATEGY_NAMES, "Distribution strategy. Default: tpu if a TPU is named, multi_worker_mirrored if TF_CONFIG lists several tasks, mirrored for several GPUs, else one_device.")
flags.DEFINE_integer("num_cpu_devices", 1, "Split the CPU into this many logical devices (mirrored replicas without GPUs: tests, CPU benchmarks).", lower_bound=1)
flags.DEFINE_string("eval_input_file", None, "Held-out TFRecords for evaluation. Default: the bundled held-out split, or --input_file (as the original did) when that is given.")
flags.DEFINE_enum("mixed_precision", "float32", PRECISION_POLICIES, "Compute dtype policy; mixed_float16 adds dynamic loss scaling.")
flags.DEFINE_enum("kernels", "auto", KERNELS_FLAG_VALUES, "Kernel set of the model (albert_tf.kernels): auto = cpu when no GPU/TPU is visible and not --deterministic, else reference (use reference with --jit_compile on GPU/TPU).")
flags.DEFINE_bool("recompute", False, "Keep only each Transformer block's input for the backward pass and "
                  "recompute the rest there: less memory, about one more forward pass of time (needs dropout 0).")
flags.DEFINE_bool("jit_compile", False, "Compile the forward/backward step with XLA (always on for TPUs).")
flags.DEFINE_integer("grad_accum_steps", 1, "Micro-batches per optimizer step; the global batch stays --train_batch_size.", lower_bound=1)
flags.DEFINE_integer("seed", 12345, "Seed of weights initialisation and data order.")
flags.DEFINE_bool("deterministic", False, "Bit-identical runs: a rerun, or a killed run resumed, ends with the same weights (op determinism, one inter-op thread; slower).")
flags.DEFINE_bool("resume_from_intact_checkpoint", False, "When the latest checkpoint in --output_dir is damaged (a truncated or corrupt file), delete it and resume from the newest intact one.")
flags.DEFINE_integer("bundled_dupe_factor", 3, "dupe_factor for the data built from the bundled corpus (no --input_file).", lower_bound=1)

FLAGS = flags.FLAGS

# Ranges and relations are checked as the flags are parsed: bad input fails in a second, in one line.
flags.register_validator("learning_rate", lambda value: math.isfinite(value) and value > 0,
                         message="must be a finite number > 0")
flags.register_validator("poly_power", lambda value: value > 0, message="must be > 0")
flags.register_multi_flags_validator(
    ["do_train", "do_eval"], lambda values: values["do_train"] or values["do_eval"],
    message="nothing to do: --do_train and --do_eval are both false")
flags.register_multi_flags_validator(
    ["max_predictions_per_seq", "max_seq_length"],
    lambda values: values["max_predictions_per_seq"] <= values["max_seq_length"],
    message="--max_predictions_per_seq must be <= --max_seq_length")
flags.register_multi_flags_validator(
    ["train_batch_size", "grad_accum_steps"],
    lambda values: values["train_batch_size"] % values["grad_accum_steps"] == 0,
    message="--train_batch_size must be a multiple of --grad_accum_steps")
flags.register_validator("albert_config_file", lambda path: not os.path.isdir(path),
                         message="is a directory; expected a config JSON file")
flags.register_validator("albert_config_file", os.path.isfile,
                         message="does not exist; expected a config JSON such as configs/albert_base.json")
flags.register_validator(
    "init_checkpoint",
    lambda path: path is None or path.startswith(("gs://", "s3://", "hdfs://")) or os.path.exists(path)
    or os.path.exists(path + ".index"),
    message="is neither a checkpoint prefix (no .index file) nor a directory")
flags.register_multi_flags_validator(
    ["use_tpu", "strategy"], lambda values: not values["use_tpu"] or values["strategy"] in (None, "tpu"),
    message="--use_tpu conflicts with --strategy")


def strategy_name():
    return "tpu" if FLAGS.use_tpu else FLAGS.strategy


def load_config(init_checkpoint):
    from albert_cli.task_config import given_config_file  # pylint: disable=g-import-not-at-top
    from albert_tf.tasks.model_inputs import check_init_checkpoint_sizes, model_config  # pylint: disable=g-import-not-at-top

    try:
        config = usage_errors(model_config)(given_config_file(FLAGS), FLAGS.init_checkpoint, init_checkpoint,
                                            FLAGS.albert_config_file)  # a Hugging Face / keras-hub --init_checkpoint's own, when no file is given
    except (ValueError, TypeError, KeyError) as error:
        raise UsageError(f"--albert_config_file: {FLAGS.albert_config_file}: {error}") from None
    if FLAGS.init_checkpoint:
        usage_errors(check_init_checkpoint_sizes)(given_config_file(FLAGS), FLAGS.init_checkpoint, config,
                                                  init_checkpoint)
    require(FLAGS.max_seq_length <= config.max_position_embeddings,
            f"--max_seq_length ({FLAGS.max_seq_length}) exceeds max_position_embeddings "
            f"({config.max_position_embeddings}) of {FLAGS.albert_config_file}")
    return config


def data_files(workers):
    """(train files, eval files); builds the bundled data when --input_file is not given."""
    from albert_cli.bundled_data import build_bundled_data  # pylint: disable=g-import-not-at-top

    if FLAGS.input_file:
        return FLAGS.input_file, FLAGS.eval_input_file or FLAGS.input_file
    require(workers == 1, "--input_file is required with several workers (the bundled data is built per machine)")
    train, heldout = build_bundled_data(
        os.path.join(FLAGS.output_dir, "data"), FLAGS.max_seq_length, FLAGS.max_predictions_per_seq,
        dupe_factor=FLAGS.bundled_dupe_factor, random_seed=FLAGS.seed,
    )
    return train, FLAGS.eval_input_file or heldout


def dataset_fn(files, global_batch_size, is_training, config):
    """`input_context -> tf.data.Dataset` for `distribute_datasets_from_function`; the files
    are checked here first, so a bad one fails with its flag named, not inside a tf.function."""
    from albert_tf.pretraining.data import pretraining_dataset  # pylint: disable=g-import-not-at-top

    vocab_sizes = {"vocab_size": config.vocab_size, "type_vocab_size": config.type_vocab_size}
    try:
        pretraining_dataset(files, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq, global_batch_size,
                            **vocab_sizes)
    except ValueError as error:
        raise UsageError(f"--{'input_file' if is_training else 'eval_input_file'}: {error}") from None

    def make_dataset(input_context):
        return pretraining_dataset(
            files, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq, global_batch_size,
            is_training=is_training, input_context=input_context, seed=FLAGS.seed, validate_files=False,
            **vocab_sizes,
        )

    return make_dataset


def data_error(error, files, flag, config):
    """The UsageError for a data error met inside training or evaluation, naming the file."""
    from albert_tf.pretraining.data import expand_file_patterns, find_bad_file  # pylint: disable=g-import-not-at-top

    bad = find_bad_file(expand_file_patterns(files), FLAGS.max_seq_length, FLAGS.max_predictions_per_seq,
                        config.vocab_size, config.type_vocab_size)
    where = f"{bad[0]}: {bad[1]}" if bad else error_line(error)
    return UsageError(f"--{flag}: bad pretraining data ({where}); stopped, nothing saved after it")


def previous_run(output_dir):
    """(summary of the last completed run or None, {step: eval record} of metrics.jsonl): what a
    rerun or a resumed run reuses instead of evaluating again."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    from albert_tf.pretraining.metrics_log import read_metrics  # pylint: disable=g-import-not-at-top

    path = os.path.join(output_dir, SUMMARY_FILE)
    summary = None
    if tf.io.gfile.exists(path):
        with tf.io.gfile.GFile(path, "rb") as handle:
            try:
                summary = parse_json(handle.read().decode("utf-8"))
            except ValueError as error:  # not UTF-8 or not JSON
                raise UsageError(f"{path}: not a summary this script wrote ({error}); move it away to write a new one") from None
        require(isinstance(summary, dict), f"{path}: expected a JSON object, got {type(summary).__name__}; "
                                           "move it away to write a new one")
    try:
        records = read_metrics(output_dir)
    except ValueError as error:
        raise UsageError(f"{error}; fix or remove that line") from None
    evaluations = {record["step"]: {key: value for key, value in record.items() if key not in ("split", "time")}
                   for record in records if record["split"] == "eval"}
    return summary, evaluations


def start_message(run):
    """One line: what the output directory holds and what this run will do with it."""
    from albert_tf.training.start_line import start_line  # pylint: disable=g-import-not-at-top

    where = FLAGS.output_dir
    if not FLAGS.do_train:
        if run.restored_step is None:
            start = "--init_checkpoint's weights" if FLAGS.init_checkpoint else "a fresh model"
            return f"no checkpoint in {where}: evaluating {start}"
        return f"evaluating {os.path.basename(run.manager.latest_checkpoint)} (step {run.restored_step}) in {where}"
    return start_line("training", where, run.manager.latest_checkpoint if run.restored_step is not None else None,
                      run.restored_step, FLAGS.num_train_steps, f"--num_train_steps={FLAGS.num_train_steps}",
                      start="--init_checkpoint's weights" if FLAGS.init_checkpoint else "a fresh model")


@contextlib.contextmanager
def sigterm_stops(what):
    """SIGTERM ends the process at once while `what` runs (it saves nothing, so nothing is lost):
    exit 143 with one line, as a stop during training gives."""
    def stop(signum, frame):
        del signum, frame
        sys.stderr.write(f"stopped by SIGTERM during {what}; checkpoints in {FLAGS.output_dir} are complete; "
                         "run again (--do_train=false to only evaluate)\n")
        sys.stderr.flush()
        os._exit(TERMINATED_EXIT_CODE)  # pylint: disable=protected-access  (no TF teardown mid-op)

    with on_sigterm(stop):
        yield


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    require_output_dir("output_dir", FLAGS.output_dir, create=False)
    if FLAGS.eval_input_file and not FLAGS.do_eval:
        sys.stderr.write("warning: --eval_input_file is not read: --do_eval is false (add --do_eval to evaluate)\n")
    name = strategy_name()

    import keras  # pylint: disable=g-import-not-at-top
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    from albert_tf.pretraining.metrics_rollback import drop_records_after  # pylint: disable=g-import-not-at-top
    from albert_tf.pretraining.run import PretrainingRun  # pylint: disable=g-import-not-at-top
    from albert_tf.checkpoints.model_files import write_model_files  # pylint: disable=g-import-not-at-top
    from albert_tf.error_text import TrainingDiverged  # pylint: disable=g-import-not-at-top
    from albert_tf.pretraining.trainer import TrainerSettings  # pylint: disable=g-import-not-at-top

    from albert_cli.pretraining_placement import keras_placement, tensorflow_placement  # pylint: disable=g-import-not-at-top

    on_tensorflow = keras.backend.backend() == "tensorflow"
    placement = (tensorflow_placement if on_tensorflow else keras_placement)(FLAGS, name)
    settle_kernels(FLAGS)
    require_output_dir("output_dir", FLAGS.output_dir)
    tf.io.gfile.makedirs(placement.worker_dir)
    lock_output_dir("output_dir", placement.worker_dir)
    from albert_tf.tasks.model_inputs import inspected_init_checkpoint  # pylint: disable=g-import-not-at-top

    init_checkpoint = inspected_init_checkpoint(FLAGS.init_checkpoint)  # looked at once, for its config and its weights
    config = load_config(init_checkpoint)
    if FLAGS.recompute:
        require_recompute_trainable(config)
    require(FLAGS.train_batch_size % (placement.replicas * FLAGS.grad_accum_steps) == 0,
            f"--train_batch_size ({FLAGS.train_batch_size}) must be a multiple of replicas ({placement.replicas}) "
            f"x --grad_accum_steps ({FLAGS.grad_accum_steps})")
    require(FLAGS.eval_batch_size % placement.replicas == 0,
            f"--eval_batch_size ({FLAGS.eval_batch_size}) must be a multiple of the replicas ({placement.replicas})")
    keras.utils.set_random_seed(FLAGS.seed)

    settings = TrainerSettings(
        train_batch_size=FLAGS.train_batch_size, num_train_steps=FLAGS.num_train_steps,
        optimizer=FLAGS.optimizer, learning_rate=FLAGS.learning_rate, num_warmup_steps=FLAGS.num_warmup_steps,
        start_warmup_step=FLAGS.start_warmup_step, poly_power=FLAGS.poly_power, grad_accum_steps=FLAGS.grad_accum_steps,
        mixed_precision=FLAGS.mixed_precision, jit_compile=FLAGS.jit_compile,
        kernels=FLAGS.kernels, recompute=FLAGS.recompute,
    )
    remove_checkpoint_partials(placement.worker_dir)  # a killed save's `ckpt-N_temp/`
    try:
        trainer = placement.trainer(config, settings)
        placement.check_resumable(trainer)
    except ValueError as error:
        raise UsageError(flag_text(error)) from None
    train_files, eval_files = data_files(placement.workers)
    try:
        run = PretrainingRun(
            trainer, FLAGS.output_dir,
            train_dataset_fn=dataset_fn(train_files, FLAGS.train_batch_size, True, config) if FLAGS.do_train else None,
            save_checkpoints_steps=FLAGS.save_checkpoints_steps, keep_checkpoint_max=FLAGS.keep_checkpoint_max,
            iterations_per_loop=FLAGS.iterations_per_loop,
        )
    except (AssertionError, ValueError, tf.errors.OpError, IndexError) as error:
        raise UsageError(flag_text(placement.cannot_resume(error))) from None
    if FLAGS.do_train and trainer.is_chief:  # steps after the restored checkpoint are redone
        write_model_files(FLAGS.output_dir, config, None if FLAGS.input_file else SPM_MODEL)  # for every tool
        drop_records_after(FLAGS.output_dir, run.restored_step or 0)
    if run.restored_step is None and FLAGS.init_checkpoint:
        from albert_tf import checkpoints  # pylint: disable=g-import-not-at-top

        try:
            report = checkpoints.load(trainer.model, init_checkpoint, FLAGS.init_checkpoint_strict, FLAGS.init_from_group0,
                                      extend_positions=FLAGS.extend_positions)
        except (ValueError, FileNotFoundError) as error:
            raise UsageError(f"--init_checkpoint: {error}") from None
        sys.stderr.write(f"{report}\n")

    finished = FLAGS.do_train and run.restored_step is not None and run.restored_step >= FLAGS.num_train_steps
    sys.stderr.write(start_message(run) + "\n")
    previous_summary, evaluations = previous_run(FLAGS.output_dir)
    if finished and previous_summary and previous_summary.get("final_step") == trainer.step and (
            not FLAGS.do_eval or previous_summary.get("eval", {}).get("step") == trainer.step):
        sys.stderr.write(f"nothing to do: its summary is {os.path.join(FLAGS.output_dir, SUMMARY_FILE)}\n")
        print("\n".join(summary_lines(previous_summary, FLAGS.output_dir, SUMMARY_FILE)))
        return

    summary = {"backend": keras.backend.backend(), "strategy": placement.description, "replicas": placement.replicas,
               "train_files": train_files}
    if FLAGS.do_train and 0 in evaluations:  # the evaluation before step 0 of an earlier attempt of this run
        summary["eval_initial"] = evaluations[0]
    evaluate = None
    if FLAGS.do_eval:
        if eval_files == train_files:
            sys.stderr.write("warning: evaluating on the training files (no --eval_input_file)\n")
        summary["eval_files"] = eval_files
        make_eval_dataset = dataset_fn(eval_files, FLAGS.eval_batch_size, False, config)

        def evaluate():
            try:
                with sigterm_stops("evaluation"):
                    values = run.evaluate(trainer.eval_batches(make_eval_dataset), FLAGS.max_eval_steps,
                                          FLAGS.eval_batch_size)
            except (tf.errors.InvalidArgumentError, tf.errors.DataLossError) as error:
                raise data_error(error, eval_files, "eval_input_file", config) from None
            summary["eval"] = dict(values, step=trainer.step)
            sys.stderr.write(f"evaluation at step {trainer.step}: {metrics_text(values)}\n")
            return summary["eval"]

        if FLAGS.do_train and run.restored_step is None and "eval_initial" not in summary:
            # The starting point, so that the summary shows what training changed on held-out data.
            summary["eval_initial"] = evaluate()
    if finished:  # stopped after its last checkpoint: only the evaluation and summary are left
        summary.update(step=trainer.step, stopped_by=None, checkpoint=run.manager.latest_checkpoint)
        if FLAGS.do_eval and trainer.step in evaluations:
            summary["eval"] = evaluations[trainer.step]
        summary = dict(previous_summary or {}, **summary)
    elif FLAGS.do_train:
        try:
            outcome = run.train(evaluate, FLAGS.eval_every_steps)
        except TrainingDiverged as error:
            sys.stderr.write(f"error: {flag_text(error)}\n")
            sys.exit(1)
        except (tf.errors.InvalidArgumentError, tf.errors.DataLossError) as error:
            raise data_error(error, train_files, "input_file", config) from None
        summary.update(outcome)
        if outcome["stopped_by"]:
            sys.stderr.write(f"stopped by {outcome['stopped_by']} at step {outcome['step']}; checkpoint saved in "
                             f"{FLAGS.output_dir}; run the same command again to resume\n")
            sys.exit(TERMINATED_EXIT_CODE)
    if FLAGS.do_eval and summary.get("eval", {}).get("step") != trainer.step:
        evaluate()
    run.write_summary(summary, SUMMARY_FILE)
    print("\n".join(summary_lines(summary, FLAGS.output_dir, SUMMARY_FILE)))


def console_main():
    """The `albert-pretrain` command."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
