"""Runs a command whose flags are defined without TensorFlow: `--help` answers at once and exits 0."""

from albert_cli.cli import prefer_onednn, run_main
from albert_cli.tensorflow_logs import quiet_tensorflow


def run_command(main, module_name):
    """`run_main(main)` for the command defined in `module_name`; `main` imports TensorFlow itself."""
    prefer_onednn()  # before TensorFlow loads
    quiet_tensorflow()
    run_main(main, help_module=module_name)
