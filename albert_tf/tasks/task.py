"""What a fine-tuning task is to the driver: only what differs from one task to another.

A task module subclasses `FineTuningTask`; the driver (`driver.run`) does
everything the tasks share (start-up, strategy, the model's backbone and `init_checkpoint`,
training with resume, which model to evaluate, predict with and export). A base class rather than a Protocol: most tasks keep its
defaults (no seeds but `seed`, the run recorded by its name, no `do_eval`), and the defaults say
what the driver expects.
"""

import dataclasses

from absl import logging


@dataclasses.dataclass
class TrainingPlan:
    """What one training run feeds `evaluated_training.fine_tune`."""

    dataset: object  # a repeating tf.data.Dataset of (features, label) or features
    train_steps: int
    warmup_steps: int
    eval_every: int  # evaluate and checkpoint every this many steps
    steps_setting: str  # the config's field train_steps comes from, which the start message names


class FineTuningTask:
    """One fine-tuning task, given its config (an `albert_tf.tasks.FineTuningConfig`: the command's
    flags, by name).

    Class attributes a task sets:
        name: how messages name it ("SQuAD 2.0", "RACE", the GLUE task's name).
        selection_metric: the dev metric (higher is better) that picks the best checkpoint.
    """

    name = None
    selection_metric = None

    @property
    def settings_name(self):
        """The task as `<output_dir>/run_settings.json` records it when training starts, so that a later
        command there works only on a run of this task (`run_settings`); default `name`."""
        return self.name

    def __init__(self, config, report=logging.info):
        """`config`: the task's `albert_tf.tasks` config; `report(line)`: what the task has to say
        (its metrics, the files written; a command prints them)."""
        self.config, self.report = config, report

    # --- before TensorFlow runs ---------------------------------------------------------------
    def check_inputs(self):
        """Raises `ConfigError` for settings that need a look at files (the config checked the rest)."""

    def check_config(self, config):
        """Raises `ConfigError` for settings the model's `AlbertConfig` cannot serve (none by default)."""

    @property
    def recompute(self):
        """Whether the backbone recomputes its blocks in the backward pass (`recompute`)."""
        return getattr(self.config, "recompute", False)

    # --- the model ----------------------------------------------------------------------------
    def head(self, backbone):
        """The task model around `backbone` (an `AlbertModel` the driver built), its weights created."""
        raise NotImplementedError

    def after_init_checkpoint(self, model):
        """Changes to `model` right after `init_checkpoint` was loaded into it (none by default)."""

    def label_names(self):
        """What each output of a classifier means (recorded beside its checkpoints), or None."""
        return None

    def fit_model(self, model):
        """The model `fit` trains and the evaluation reads (default `model` itself, which the
        checkpoints hold either way)."""
        return model

    loss = None  # the Keras loss `fit` uses; None: the model's own `compute_loss`

    # --- data and training --------------------------------------------------------------------
    def read_dev(self, tokenizer, cache_dir):
        """Reads what training evaluates on and `do_eval` / `do_predict` need, once, before training."""

    def training_plan(self, tokenizer, cache_dir, seed):
        """The `TrainingPlan` of one training run with `seed`."""
        raise NotImplementedError

    def evaluate(self, fit_model):
        """{metric: value} on the dev data, for picking the best checkpoint."""
        raise NotImplementedError

    def seeds(self):
        """The seeds to train with, one run each (more than one: each in `<output_dir>/seed_<seed>`)."""
        return [self.config.seed]

    def seeds_summary(self, records):
        """What `seeds_summary.json` holds when `seeds()` gave more than one."""
        raise NotImplementedError(f"{type(self).__name__} trains with one seed")

    # --- after training -----------------------------------------------------------------------
    def exports(self):
        """Whether the config asks for an export (default: `export_dir`)."""
        return bool(self.config.export_dir)

    def write_evaluation(self, model):
        """`do_eval` (of a task that has it): writes and reports the dev metrics."""
        raise NotImplementedError

    def write_predictions(self, model):
        """`do_predict`: writes the predictions; returns the metrics it scored, or None."""
        raise NotImplementedError

    def export(self, model, predicted_metrics):
        """Writes the exports `exports()` found asked for, each in the form its exporter decides
        (`albert_tf.serving`); `predicted_metrics`: `do_predict`'s, or None."""
        raise NotImplementedError
