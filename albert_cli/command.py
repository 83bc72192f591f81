"""Runs a command whose flags are defined without TensorFlow: `--help` answers at once and exits 0."""

import importlib
import sys

from albert_cli.bundled import TINY_CONFIG
from albert_cli.cli import flag_text, prefer_onednn, require, run_main
from albert_cli.task_config import config_from_flags
from albert_tf.error_text import TrainingDiverged
from albert_cli.tensorflow_logs import quiet_tensorflow


def run_command(main, module_name):
    """`run_main(main)` for the command defined in `module_name`; `main` imports TensorFlow itself."""
    prefer_onednn()  # before TensorFlow loads
    quiet_tensorflow()
    run_main(main, help_module=module_name)


def fine_tuning_command(flag_values, task_module, task_class, config_class, module_name):
    """The console entry point of the fine-tuning command defined in `module_name`: `run_fine_tuning`
    of `task_class` (a name in `albert_tf.tasks.<task_module>`, imported past --help: TensorFlow) on
    the `config_class` (an `albert_tf.tasks` config) of `flag_values`, what the task reports printed."""

    def main(argv):
        require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
        task = getattr(importlib.import_module(f"albert_tf.tasks.{task_module}"), task_class)
        run_fine_tuning(task(config_from_flags(config_class, flag_values), print))

    return lambda: run_command(main, module_name)


def run_fine_tuning(task):
    """`albert_tf.tasks.driver.run(task)` as a command runs it: progress lines on stderr naming the
    settings as flags, the bundled tiny config as `--albert_config_file`'s default; a diverged
    training is one line and exit status 1 (as run_pretraining's: not a usage error)."""
    from albert_tf.tasks import driver  # pylint: disable=g-import-not-at-top (TensorFlow)

    try:
        driver.run(task, progress=lambda line: sys.stderr.write(line + "\n"), spell=lambda name: f"--{name}",
                   default_config_file=TINY_CONFIG)
    except TrainingDiverged as error:
        sys.stderr.write(f"error: {flag_text(error)}\n")
        sys.exit(1)
