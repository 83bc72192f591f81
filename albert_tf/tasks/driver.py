"""The one fine-tuning driver: everything `albert-classify`, `albert-squad` and `albert-race` share,
for any `FineTuningTask` (`task.py`), from a command or from Python.

`run(task)`: the task's input checks; start-up (determinism, the export directory, tokenizer and
config, the distribution strategy, the kernel set, the locked output directory, the run record
compared); training with resume (one run per seed, the run record written once its data is read,
the best checkpoint kept by the task's metric); then the model to evaluate, predict with and
export (the best fine-tuned one, else `init_checkpoint`'s) and the task's evaluation, predictions
and exports. A run that fails leaves no `output_dir` it made that holds no trained model. Every
task model is built by `build_model`: the backbone from the config, the task's head around it,
then `init_checkpoint` (`model_inputs.load_init_checkpoint`: the backbone always, the head when the
checkpoint holds one that fits). Bad settings are `ConfigError`s; a diverged training is
`TrainingDiverged`; what the run has to say goes to `progress(line)`, its settings named by
`spell(name)` (a command's: `--name`).
"""

import os
import shutil

import keras
import tensorflow as tf
from absl import logging

from albert_tf.checkpoints.model_files import write_model_files
from albert_tf.io_utils import write_json
from albert_tf.json_text import parse_json
from albert_tf.models import AlbertModel
from albert_tf.tasks.config_error import ConfigError, field_error, require
from albert_tf.tasks.model_inputs import inspected_init_checkpoint, load_init_checkpoint, load_tokenizer_and_config
from albert_tf.tasks.output_dirs import check_export_version_is_new, require_output_dir
from albert_tf.tasks.output_lock import lock_output_dir, unlock_output_dir
from albert_tf.tasks.run_settings import (check_resume, check_run_settings, holds_a_trained_model,
                                          record_run_settings, run_settings, training_settings)
from albert_tf.tasks.run_setup import (keep_tensorflow_off_accelerators, require_recompute_trainable, settle_kernels,
                                       start_determinism)
from albert_tf.training import evaluated_training, run_strategy
from albert_tf.training.optimization import fine_tuning_optimizer
from albert_tf.training.distribute import per_replica_batch_size


SEEDS_SUMMARY_FILE = "seeds_summary.json"


def compute_dtype(mixed_precision):
    """The Keras dtype policy for a `mixed_precision` value (None = float32)."""
    return None if mixed_precision == "float32" else mixed_precision


# The settings that write SavedModels or LiteRT files: TensorFlow's formats, traced by TensorFlow.
EXPORT_SETTINGS = ("export_dir", "export_tflite")


def refuse_exports_off_tensorflow(config):
    """An export setting on JAX or PyTorch is a ConfigError before any work: the model trained there is
    exported by the same command on TensorFlow, which reads its portable checkpoints."""
    backend = keras.backend.backend()
    given = [name for name in EXPORT_SETTINGS if getattr(config, name, None)]
    if backend != "tensorflow" and given:
        raise ConfigError(given[0], None, "{%s}: exports are TensorFlow's (SavedModel, LiteRT) and Keras runs on "
                          "{backend}; train without it, then run the same command with KERAS_BACKEND=tensorflow "
                          "{do_train}=false on this {output_dir} to export the model trained here" % given[0],
                          backend=backend)


class FineTuningRun:
    """What start-up settles for one run: the tokenizer, config, strategy and feature cache."""

    def __init__(self, task, progress=logging.info, spell=str, default_config_file=None):
        """`default_config_file`: the model's config when neither `albert_config_file` nor
        `init_checkpoint` gives one (a command's: the bundled tiny config)."""
        config = task.config
        self.task, self.config, self.progress, self.spell = task, config, progress, spell
        for name in ("spm_model_file", "albert_config_file"):
            path = getattr(config, name)
            require(path is None or tf.io.gfile.exists(path), name, "{%s}: {path} does not exist" % name, path=path)
        task.check_inputs()
        if config.do_train and hasattr(config, "warmup_step") and config.warmup_step > config.train_step:
            # Said, not refused: a short run inside the warmup is a real use (a first step at rate 0
            # keeps the initial weights), as in the original, which accepts it too.
            logging.warning("%s %d exceeds %s %d: the learning rate never reaches %s", spell("warmup_step"),
                            config.warmup_step, spell("train_step"), config.train_step, spell("learning_rate"))
        keep_tensorflow_off_accelerators()  # on JAX and PyTorch, before TensorFlow runs anything
        start_determinism(config)
        if config.export_dir is not None:
            require_output_dir("export_dir", config.export_dir, create=False)
            check_export_version_is_new(config.export_dir, config.export_version)
        self.init_checkpoint = inspected_init_checkpoint(config.init_checkpoint)  # for the config and the weights
        self.tokenizer, self.model_config = load_tokenizer_and_config(config, self.init_checkpoint,
                                                                      default_config_file)
        task.check_config(self.model_config)
        if task.recompute and config.do_train:
            require_recompute_trainable(self.model_config)
        refuse_exports_off_tensorflow(config)
        try:
            self.strategy = run_strategy.for_this_backend(config.strategy, tpu_address=config.tpu_name)
        except ValueError as error:
            raise field_error("strategy", error) from None
        settle_kernels(config)
        if config.do_train:
            try:
                per_replica_batch_size(config.train_batch_size, self.strategy.num_replicas_in_sync)
            except ValueError as error:
                raise field_error("train_batch_size", error) from None
        # output_dir is checked before it is made: a refused run makes nothing there.
        require_output_dir("output_dir", config.output_dir, create=False)
        self.settings = run_settings(task.settings_name, config.max_seq_length, self.model_config,
                                     config.spm_model_file)
        check_run_settings(config.output_dir, self.settings)
        if config.do_train:
            for name, value, old in check_resume(config.output_dir, training_settings(config)):
                progress(f"resuming with {spell(name)}={value} (the run had {old})")
        self.require_a_model()
        self.made_output_dir = "://" not in config.output_dir and not os.path.lexists(config.output_dir)
        require_output_dir("output_dir", config.output_dir)
        lock_output_dir("output_dir", config.output_dir,
                        lambda warning: progress(f"warning: {warning.worded(spell)}"))
        self.cache_dir = config.cached_dir or os.path.join(config.output_dir, "features")

    def require_a_model(self):
        """Without `do_train`, evaluating, predicting or exporting needs a fine-tuned `output_dir` or
        `init_checkpoint`: refused before `output_dir` is made or any data read."""
        config, task = self.config, self.task
        uses_model = getattr(config, "do_eval", False) or config.do_predict or task.exports()
        require(config.do_train or not uses_model or config.init_checkpoint
                or evaluated_training.read_best_metrics(self.fine_tuned_dir()) is not None, "output_dir",
                "{output_dir} {directory} holds no fine-tuned model (run with {do_train}) and no {init_checkpoint} "
                "was given", directory=config.output_dir)

    def remove_untrained_output_dir(self):
        """After a failure: the `output_dir` this run made, unless it holds a trained model."""
        output_dir = self.config.output_dir
        if self.made_output_dir and not holds_a_trained_model(output_dir):
            unlock_output_dir(output_dir)
            shutil.rmtree(output_dir, ignore_errors=True)

    def fine_tuned_dir(self):
        """Where the model of `output_dir` is: the best seed's directory of a `seeds` run
        (`seeds_summary.json`), else `output_dir` itself."""
        output_dir = self.config.output_dir
        path = os.path.join(output_dir, SEEDS_SUMMARY_FILE)
        if not tf.io.gfile.exists(path):
            return output_dir
        try:
            with tf.io.gfile.GFile(path, "r") as handle:
                runs = parse_json(handle.read())["runs"]
            best = max(runs, key=lambda record: record["metrics"][self.task.selection_metric])
            return os.path.join(output_dir, f"seed_{int(best['seed'])}")  # where it is now, if moved
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, OverflowError) as error:
            raise ConfigError("output_dir", None, "{output_dir} {directory}: {path} is unreadable ({error}); use "
                              "another {output_dir}", directory=output_dir, path=path, error=repr(error)) from None

    def build_model(self, seed, init_checkpoint=None):
        """The task's model: the backbone from the config (the run's dtype policy, kernel set and
        `recompute`), the task's head around it, then `init_checkpoint` if given."""
        keras.utils.set_random_seed(seed)
        with self.strategy.scope():
            backbone = AlbertModel(self.model_config, dtype=compute_dtype(self.config.mixed_precision),
                                   recompute=self.task.recompute, name="albert", kernels=self.config.kernels)
            model = self.task.head(backbone)
        if init_checkpoint:
            load_init_checkpoint(model, init_checkpoint, self.config.extend_positions)
            self.task.after_init_checkpoint(model)
        return model

    def train(self):
        """Trains one run per seed; returns the output directory of the best one."""
        seeds = self.task.seeds()
        records = []
        for seed in seeds:
            output_dir = self.config.output_dir if len(seeds) == 1 else os.path.join(self.config.output_dir,
                                                                                     f"seed_{seed}")
            tf.io.gfile.makedirs(output_dir)
            best = self.train_one_seed(seed, output_dir)
            records.append(dict(best, seed=seed, output_dir=output_dir))
        metric = self.task.selection_metric
        if len(seeds) > 1:
            summary = self.task.seeds_summary(records)
            summary["runs"] = records
            write_json(os.path.join(self.config.output_dir, SEEDS_SUMMARY_FILE), summary)
            logging.info("over %d seeds: %s", len(seeds), {k: v for k, v in summary.items() if k != "runs"})
        return max(records, key=lambda record: record["metrics"][metric])["output_dir"]

    def train_one_seed(self, seed, output_dir):
        config = self.config
        plan = self.task.training_plan(self.tokenizer, self.cache_dir, seed)
        record_run_settings(config.output_dir, self.settings, training_settings(config))  # its data accepted
        steps_setting = f"{self.spell(plan.steps_setting)}={getattr(config, plan.steps_setting)}"
        self.progress(evaluated_training.start_message(output_dir, plan.train_steps, steps_setting))
        model = self.build_model(seed, self.init_checkpoint)
        with self.strategy.scope():
            optimizer = fine_tuning_optimizer(config.optimizer, config.learning_rate, plan.train_steps,
                                              plan.warmup_steps, config.mixed_precision)
            best = evaluated_training.fine_tune(
                self.task.fit_model(model), optimizer, plan.dataset, self.task.evaluate,
                self.task.selection_metric, plan.train_steps, plan.eval_every, output_dir,
                keep_checkpoint_max=config.keep_checkpoint_max, jit_compile=config.jit_compile, loss=self.task.loss,
                saved_model=model)
        write_model_files(output_dir, self.model_config, config.spm_model_file,  # beside the checkpoints, for every tool
                          label_names=self.task.label_names())
        logging.info("seed %d: trained %d steps (%d warmup); best %s at step %d: %s", seed, plan.train_steps,
                     plan.warmup_steps, self.task.selection_metric, best["step"], best["metrics"])
        return best

    def trained_model(self, output_dir):
        """The model to evaluate, predict with and export: the best fine-tuned in `output_dir`, else
        `init_checkpoint`'s."""
        fine_tuned = evaluated_training.read_best_metrics(output_dir) is not None
        # The fine-tuned weights replace all of init_checkpoint's: reading it again would be wasted.
        model = self.build_model(self.config.seed, None if fine_tuned else self.init_checkpoint)
        if fine_tuned:
            described = evaluated_training.best_model_text(output_dir, self.task.selection_metric)  # checks the record
            evaluated_training.restore_best(model, output_dir)
            logging.info("using %s", described)
        return model


def run(task, progress=logging.info, spell=str, default_config_file=None):
    """Runs `task` (a `FineTuningTask`) as its config says (`FineTuningRun` takes the rest)."""
    started = FineTuningRun(task, progress, spell, default_config_file)
    try:
        run_started(started)
    except BaseException:
        started.remove_untrained_output_dir()
        raise


def run_started(started):
    """What `run` does once start-up has succeeded."""
    task, config = started.task, started.config
    task.read_dev(started.tokenizer, started.cache_dir)
    output_dir = started.train() if config.do_train else started.fine_tuned_dir()
    do_eval = getattr(config, "do_eval", False)
    if not (do_eval or config.do_predict or task.exports()):
        return
    model = started.trained_model(output_dir)
    if do_eval:
        with started.strategy.scope():
            task.write_evaluation(model)
    predicted_metrics = task.write_predictions(model) if config.do_predict else None
    if task.exports():
        task.export(model, predicted_metrics)
