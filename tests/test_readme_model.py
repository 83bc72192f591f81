"""The README's "The model in five lines" runs as printed on the README's own pretraining output, from
another directory than the checkout, after the README's set-up (`pip install -r requirements.txt`)."""

import os
import re
import subprocess

from pretraining_test_data import REPO_ROOT, run_script
from venv_test_env import env_without_pythonpath, venv_seeing_this_interpreters_packages


def _readme_snippet():
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    section = readme[readme.index("## The model in five lines"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_five_lines_run_on_a_tiny_pretraining_output(tmp_path):
    output_dir = tmp_path / "output" / "pretraining"  # the README's default --output_dir, under tmp_path
    result = run_script([f"--output_dir={output_dir}", "--max_seq_length=32", "--max_predictions_per_seq=4",
                         "--train_batch_size=8", "--num_train_steps=2", "--num_warmup_steps=0",
                         "--iterations_per_loop=1", "--bundled_dupe_factor=1", "--do_eval=false"], timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    # The config and the SentencePiece model are written beside the checkpoints.
    assert {"albert_config.json", "30k-clean.model"} <= set(os.listdir(output_dir))

    # The README's set-up in a new environment (its pins already met by this interpreter's packages,
    # so nothing is downloaded), then the snippet in tmp_path with no PYTHONPATH: the import finds the
    # package that requirements.txt installed, not the working directory.
    bin_dir = venv_seeing_this_interpreters_packages(tmp_path / "venv")
    env = env_without_pythonpath(TF_CPP_MIN_LOG_LEVEL="2")
    installed = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation",
                                "-r", "requirements.txt"], capture_output=True, text=True, timeout=600, cwd=REPO_ROOT,
                               env=env)
    assert installed.returncode == 0, installed.stderr[-3000:]
    check = "\nprint(model.load_report)\nprint('mlm_logits', tuple(outputs['mlm_logits'].shape))\n"
    ran = subprocess.run([str(bin_dir / "python"), "-c", _readme_snippet() + check], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "Loaded 32 of 32 variables" in ran.stdout and "(TF2 checkpoint)" in ran.stdout
    assert "mlm_logits (2, 2, " in ran.stdout  # [batch, positions, vocab]
