"""Runs Python code in a fresh interpreter on a Keras backend, by default with TensorFlow unimportable.

What a machine with Keras, JAX or PyTorch and no TensorFlow sees: `import tensorflow` anywhere
on the way (ours or Keras') raises ImportError, so a test passing here proves the code needs none.
"""

import os
import subprocess
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)

_NO_TENSORFLOW = 'import sys\nsys.modules["tensorflow"] = None  # `import tensorflow` now raises ImportError\n'


def completed_on_backend(backend, code, *args, tensorflow=False, timeout=300):
    """`python -c code args` with KERAS_BACKEND=backend (TensorFlow importable only with
    `tensorflow=True`, the repository and tests/ importable), as a `subprocess.CompletedProcess`."""
    prelude = "import sys\n" if tensorflow else _NO_TENSORFLOW
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=os.pathsep.join([REPO, TESTS]), TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-c", prelude + code, *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)


def run_on_backend(backend, code, *args, tensorflow=False, timeout=300):
    """`completed_on_backend`'s stdout; fails the test with its stderr when it exits non-zero."""
    result = completed_on_backend(backend, code, *args, tensorflow=tensorflow, timeout=timeout)
    assert result.returncode == 0, f"{backend}: exit {result.returncode}\n{result.stderr[-4000:]}"
    return result.stdout


def script_code(script, *args):
    """Code that runs `script` (a path) with `args` as `python script args` would."""
    return f"import runpy\nsys.argv = {[script, *args]!r}\nrunpy.run_path({script!r}, run_name='__main__')\n"


def run_script_on_backend(backend, script, *args, tensorflow=False, timeout=300):
    """`python script args` as `run_on_backend` runs code."""
    return run_on_backend(backend, script_code(script, *args), tensorflow=tensorflow, timeout=timeout)
