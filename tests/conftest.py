"""Tests run with TensorFlow's oneDNN CPU kernels on, as the scripts ask for them, and in parallel."""

import os

import pytest

from albert_cli.cli import prefer_onednn

prefer_onednn()  # before any test module imports TensorFlow


MAX_WORKERS = 4  # each worker holds TensorFlow, torch and the end-to-end runs' subprocesses


def _usable_cpus():
    """The CPUs this process may run on (a container's cpuset, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """`python -m pytest` runs on one pytest-xdist worker per usable CPU, at most MAX_WORKERS, each
    test file on one worker: the slow files share module fixtures (a pretraining run, a wheel)
    that would otherwise be made once per worker. `-n 0` or `-p no:xdist` runs in one process,
    `-n N` on N workers."""
    if (not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput")
            or config.option.numprocesses is not None):
        return
    config.option.numprocesses = min(MAX_WORKERS, _usable_cpus())
    if config.option.dist == "no":
        config.option.dist = "loadfile"
