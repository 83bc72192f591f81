"""`albert-squad` and `albert-race` (and their run_*.py wrappers): --help shows the command's flags and
exits 0 before TensorFlow is imported."""

import os
import subprocess
import sys

import pytest

from squad_test_data import REPO

_HELP = """
import sys
sys.argv = [sys.argv[1], "--help"]
from albert_cli.{module} import console_main
try:
    console_main()
except SystemExit as done:
    print("tensorflow imported:", "tensorflow" in sys.modules)
    raise
"""


@pytest.mark.parametrize("module, command, flags", [
    ("squad", "albert-squad", ["--predict_file", "--doc_stride", "--export_dir", "--spm_model_file"]),
    ("race", "albert-race", ["--data_dir", "--max_qa_length", "--export_dir", "--spm_model_file"]),
])
def test_help_exits_0_without_tensorflow(module, command, flags):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", _HELP.format(module=module), command], capture_output=True,
                            text=True, env=env, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "tensorflow imported: False" in result.stdout
    assert f"{command} --" in result.stdout and all(flag in result.stdout for flag in flags), result.stdout[-2000:]


@pytest.mark.parametrize("script", ["run_squad.py", "run_race.py"])
def test_the_wrappers_show_the_same_help(script):
    result = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, cwd=REPO,
                            timeout=120)
    assert result.returncode == 0 and "--export_dir" in result.stdout, result.stderr[-2000:]
