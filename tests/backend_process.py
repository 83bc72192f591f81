"""Runs Python code in a fresh interpreter on a Keras backend, by default with TensorFlow unimportable.

What a machine with Keras, JAX or PyTorch and no TensorFlow sees: `import tensorflow` anywhere
on the way (ours or Keras') raises ImportError, so a test passing here proves the code needs none.
"""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_NO_TENSORFLOW = 'import sys\nsys.modules["tensorflow"] = None  # `import tensorflow` now raises ImportError\n'


def run_on_backend(backend, code, *args, tensorflow=False, timeout=300):
    """`python -c code args` with KERAS_BACKEND=backend (TensorFlow importable only with
    `tensorflow=True`); returns its stdout, fails the test with its stderr when it exits non-zero."""
    prelude = "import sys\n" if tensorflow else _NO_TENSORFLOW
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-c", prelude + code, *args], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{backend}: exit {result.returncode}\n{result.stderr[-4000:]}"
    return result.stdout


def run_script_on_backend(backend, script, *args, tensorflow=False, timeout=300):
    """`python script args` (a path under the repository) as `run_on_backend` runs code."""
    code = f"import runpy\nsys.argv = {[script, *args]!r}\nrunpy.run_path({script!r}, run_name='__main__')\n"
    return run_on_backend(backend, code, tensorflow=tensorflow, timeout=timeout)
