"""The scripts turn on TensorFlow's oneDNN CPU kernels unless the user chose otherwise; importing
the library changes no environment variable."""

import os
import platform
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT_ONEDNN = (
    "import os; from tensorflow.python.util import _pywrap_util_port as p; "
    "print(os.environ.get('TF_ENABLE_ONEDNN_OPTS'), p.IsMklEnabled())"
)
# TF's x86 Linux wheels carry oneDNN; elsewhere the variable may be set but have nothing to enable.
x86_only = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="oneDNN kernels ship in x86 builds")


def report(first_import, env_value=None):
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    if env_value is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = env_value
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    code = f"import sys; sys.argv = ['x']; {first_import}; import tensorflow; {REPORT_ONEDNN}"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)
    return result.stdout.split()[-2:]


@x86_only
@pytest.mark.parametrize("first_import", ["import run_classifier", "import run_pretraining", "import export_encoder"])
def test_scripts_load_tensorflow_with_onednn_on(first_import):
    assert report(first_import) == ["1", "True"]


def test_users_choice_wins():
    assert report("import run_classifier", env_value="0") == ["0", "False"]


def test_importing_the_library_sets_no_environment_variable():
    # TensorFlow and Keras set a few of their own when imported: import them first.
    code = ("import os, tensorflow, keras; before = dict(os.environ); "
            "import albert_tf, albert_tf.models, albert_tf.kernels.cpu, albert_tf.kernels.cpu_inference; "
            "print(sorted(set(os.environ.items()) ^ set(before.items())))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[-2] == "[]"

