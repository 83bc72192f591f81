"""Tests run with TensorFlow's oneDNN CPU kernels on, as the scripts ask for them, and in parallel."""

import pytest

from albert_tf.cli import prefer_onednn

prefer_onednn()  # before any test module imports TensorFlow


MAX_WORKERS = 4  # each worker holds TensorFlow, torch and the end-to-end runs' subprocesses


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """`python -m pytest` runs on one worker per core, at most MAX_WORKERS (pytest-xdist), each test
    file on one worker: the slow files share module fixtures (a pretraining run, a wheel) that
    would otherwise be made once per worker. `-n 0` or `-p no:xdist` runs in one process, `-n N`
    on N workers."""
    if (not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput")
            or config.option.numprocesses is not None):
        return
    config.option.numprocesses = "auto"
    config.option.maxprocesses = config.option.maxprocesses or MAX_WORKERS
    if config.option.dist == "no":
        config.option.dist = "loadfile"
