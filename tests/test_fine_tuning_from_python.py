"""docs/fine_tuning.md's "From Python" lines run as printed: a config, the task made of it and the
driver fine-tune the tiny model on the bundled SST-2 sample, evaluate it and export its SavedModel;
the saved config reads back equal."""

import json
import os
import re

from glue_test_data import REPO
import script_process


def _python_lines():
    with open(os.path.join(REPO, "docs", "fine_tuning.md"), encoding="utf-8") as handle:
        page = handle.read()
    section = page[page.index("## From Python"):page.index("\n# GLUE\n")]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_docs_python_lines_fine_tune_evaluate_and_export(tmp_path):
    (tmp_path / "lines.py").write_text(_python_lines(), encoding="utf-8")
    result = script_process.run_python([str(tmp_path / "lines.py")], cwd=str(tmp_path),
                                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    output_dir = tmp_path / "output" / "sst2"
    assert "no checkpoint in output/sst2: fine-tuning from step 0 to step 10" in result.stdout
    with open(output_dir / "best_metrics.json", encoding="utf-8") as handle:
        best = json.load(handle)
    assert best["step"] in (5, 10) and 0.0 <= best["metrics"]["accuracy"] <= 1.0
    with open(output_dir / "eval_results.json", encoding="utf-8") as handle:
        metrics = json.load(handle)
    assert f"SST-2 dev: accuracy={metrics['accuracy']:.4f}" in result.stdout
    saved_model = output_dir / "export" / "1"
    assert (saved_model / "saved_model.pb").is_file()
    assert "exported the serving SavedModel to output/sst2/export/1" in result.stdout

    from albert_tf.tasks import ClassifierConfig

    with open(tmp_path / "sst2_config.json", encoding="utf-8") as handle:
        config = ClassifierConfig.from_dict(json.load(handle))
    assert (config.task_name, config.train_step, config.export_version) == ("SST-2", 10, 1)
