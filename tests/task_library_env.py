"""The TFLite Task Library's own environment for the tests (bench/install_task_library.sh), made or
repaired on first use: an environment whose python exists but cannot import tflite-support (an
install stopped midway) is installed again, never used half made."""

import fcntl
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(REPO, ".venv-tflite-support", "bin", "python")
QA_SCRIPT = os.path.join(REPO, "bench", "task_library_qa.py")
_ready = []


def _imports_the_task_library():
    if not os.path.exists(VENV_PYTHON):
        return False
    return subprocess.run([VENV_PYTHON, "-c", "import tflite_support.task.text"], capture_output=True).returncode == 0


def task_library_python():
    """The Task Library's python, installed (or repaired) once per test process if need be."""
    if not _ready:
        with open(os.path.join(REPO, ".venv-tflite-support.lock"), "w") as lock:  # one installer among workers
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not _imports_the_task_library():
                # The script recreates an environment that cannot import tflite-support.
                subprocess.run(["bash", os.path.join(REPO, "bench", "install_task_library.sh")], check=True)
        _ready.append(True)
    return VENV_PYTHON


def run_task_library_qa(*args):
    """bench/task_library_qa.py `args` in the Task Library's environment (a CompletedProcess, text)."""
    return subprocess.run([task_library_python(), QA_SCRIPT, *map(str, args)], capture_output=True, text=True,
                          cwd=REPO)
