"""Tests run with TensorFlow's oneDNN CPU kernels on, as the scripts ask for them, and in parallel."""

import gc
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


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After each test, its garbage is collected and what stays alive (TensorFlow, Keras, module
    fixtures) is moved out of the collector's reach, so that later collections walk only the new
    objects. Measured with gc.callbacks over 9 in-process files in one process (test_checkpoints,
    test_models, test_interop_huggingface, test_parity_huggingface, test_layers, test_kernels_cpu,
    test_optimization, test_block_sparse_attention, test_question_answering_model): the collector's
    CPU fell from 11.4 to 6.4 s (the process's from 229 to 225 s), the peak memory from 3.7 to 3.1 GB."""
    del item, nextitem
    gc.collect()
    gc.freeze()
