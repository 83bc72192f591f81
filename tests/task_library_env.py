"""The TFLite Task Library's own environment for the tests (bench/install_task_library.sh), made or
repaired on first use: an environment whose python exists but cannot import tflite-support (an
install stopped midway) is installed again, never used half made. And stand-ins for an export's
files, for the bench's checks that come before the Task Library runs."""

import io
import os
import subprocess
import zipfile

from albert_tf.serving.litert.metadata import SENTENCEPIECE_FILE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(REPO, ".venv-tflite-support", "bin", "python")
QA_SCRIPT = os.path.join(REPO, "bench", "task_library_qa.py")
_ready = []


def task_library_python():
    """The Task Library's python, once per test process through bench/install_task_library.sh, which
    is idempotent (under a second when all is there) and makes anew an environment that cannot import
    tflite-support (an install stopped midway)."""
    if not _ready:  # the script takes its own lock: one installer among workers
        subprocess.run(["bash", os.path.join(REPO, "bench", "install_task_library.sh")], check=True)
        _ready.append(True)
    return VENV_PYTHON


def run_task_library_qa(*args):
    """bench/task_library_qa.py `args` in the Task Library's environment (a CompletedProcess, text)."""
    return subprocess.run([task_library_python(), QA_SCRIPT, *map(str, args)], capture_output=True, text=True,
                          cwd=REPO)


def write_fake_task_library_models(tflite_dir, spm_model_file, name=SENTENCEPIECE_FILE):
    """question_answerer_{float32,dynamic_int8}.tflite that are no models but carry, as an export's
    do, a SentencePiece model (`name` in the archive) in a zip archive after the model's bytes."""
    os.makedirs(tflite_dir, exist_ok=True)
    for quantization in ("float32", "dynamic_int8"):
        packed = io.BytesIO(b"TFL3, but not a model")
        packed.seek(0, os.SEEK_END)
        with zipfile.ZipFile(packed, "a") as archive:
            archive.write(spm_model_file, name)
        with open(os.path.join(tflite_dir, f"question_answerer_{quantization}.tflite"), "wb") as handle:
            handle.write(packed.getvalue())
