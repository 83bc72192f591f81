"""Runs a command whose flags are defined without TensorFlow: `--help` answers at once and exits 0."""

import importlib

from albert_cli.cli import prefer_onednn, require, run_main
from albert_cli.task_config import config_from_flags
from albert_cli.tensorflow_logs import quiet_tensorflow


def run_command(main, module_name):
    """`run_main(main)` for the command defined in `module_name`; `main` imports TensorFlow itself."""
    prefer_onednn()  # before TensorFlow loads
    quiet_tensorflow()
    run_main(main, help_module=module_name)


def fine_tuning_command(flag_values, task_module, task_class, config_class, module_name):
    """The console entry point of the fine-tuning command defined in `module_name`: `driver.run` of
    `task_class` (a name in `albert_tf.tasks.<task_module>`) on the `config_class` (an
    `albert_tf.tasks` config) of `flag_values`, what the task reports printed; both imported past
    --help (TensorFlow)."""

    def main(argv):
        require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
        from albert_cli.fine_tuning import driver  # pylint: disable=g-import-not-at-top

        task = getattr(importlib.import_module(f"albert_tf.tasks.{task_module}"), task_class)
        driver.run(task(config_from_flags(config_class, flag_values), print))

    return lambda: run_command(main, module_name)
