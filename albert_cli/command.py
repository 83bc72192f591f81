"""Runs a command whose flags are defined without TensorFlow: `--help` answers at once and exits 0."""

import sys

from albert_tf.cli import prefer_onednn, run_main

HELP_FLAGS = ("-?", "-h", "-help", "--help", "--helpshort", "--helpfull", "--helpxml")


def run_command(main, module_name):
    """`run_main(main)` for the command defined in `module_name`; `main` imports TensorFlow itself."""
    prefer_onednn()  # before TensorFlow loads
    try:
        run_main(main, help_module=module_name)
    except SystemExit as done:
        # absl exits with status 1 after printing the help it was asked for: not an error.
        if done.code == 1 and any(arg in HELP_FLAGS for arg in sys.argv[1:]):
            sys.exit(0)
        raise
