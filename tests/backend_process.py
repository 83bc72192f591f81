"""Runs Python code in a fresh interpreter on a Keras backend with TensorFlow unimportable.

What a machine with Keras, JAX or PyTorch and no TensorFlow sees: `import tensorflow` anywhere
on the way (ours or Keras') raises ImportError, so a test passing here proves the code needs none.
"""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PRELUDE = 'import sys\nsys.modules["tensorflow"] = None  # `import tensorflow` now raises ImportError\n'


def run_without_tensorflow(backend, code, *args, timeout=300):
    """`python -c code args` with KERAS_BACKEND=backend; returns its stdout, fails the test with its
    stderr when it exits non-zero."""
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=REPO)
    result = subprocess.run([sys.executable, "-c", _PRELUDE + code, *args], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{backend}: exit {result.returncode}\n{result.stderr[-4000:]}"
    return result.stdout
