"""`--export_version`: an existing version folder is refused before any work (never overwritten)."""

import os

import pytest

import script_process
from squad_test_data import SQUAD_DEV

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("script, model_dir, flags", [
    ("run_classifier.py", "", ["--do_eval", "--output_dir={tmp_path}/out"]),
    ("export_encoder.py", "preprocessing", ["--init_checkpoint={tmp_path}/never_read"]),
    ("run_squad.py", "", ["--do_predict", f"--predict_file={SQUAD_DEV}", "--init_checkpoint={tmp_path}/never_read",
                          "--output_dir={tmp_path}/out"])])
def test_an_existing_export_version_is_refused(tmp_path, script, model_dir, flags):
    existing = tmp_path / "export" / model_dir / "1"
    existing.mkdir(parents=True)
    command = [os.path.join(REPO, script), *[flag.format(tmp_path=tmp_path) for flag in flags],
               f"--export_dir={tmp_path / 'export'}", "--export_version=1"]
    result = script_process.run_python(command, cwd=tmp_path, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith(f"error: --export_version: {existing} exists")
    assert os.listdir(existing) == [] and not (tmp_path / "out" / "features").exists()
