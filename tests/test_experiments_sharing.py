"""sharing and embedding_size end to end at a tiny scale: the variants differ as they should."""

import os

from albert_cli.experiments import embedding_size, sharing
from tests.experiments_test_data import png_size, tiny_setup


def _check_outputs(setup, results, num_variants):
    assert len(results["variants"]) == num_variants
    assert 0.5 <= results["finetune_majority_accuracy"] <= 1.0
    for row in results["variants"]:
        assert 0.0 <= row["heldout_masked_lm_accuracy"] <= 1.0
        assert 0.0 <= row["dev_score"] <= 1.0
        assert row["heldout_eval_steps"] == setup.eval_batches
    # the error bars' n: every pair of the evaluated batches, up to max_predictions_per_seq tokens each
    counts = results["counts"]
    assert counts["sentence_pairs"] == setup.eval_batches * setup.train_batch_size
    assert 0 < counts["masked_lm_predictions"] <= counts["sentence_pairs"] * setup.max_predictions_per_seq
    assert counts["dev_examples"] == 8
    assert 0.5 <= results["heldout_sop_majority_accuracy"] <= 1.0
    with open(os.path.join(setup.output_dir, "results.md")) as handle:
        assert handle.read().count("\n| ") == num_variants + 1  # heading + one row each
    assert png_size(os.path.join(setup.output_dir, "figure.png"))[0] > 100


def test_sharing_end_to_end(tmp_path):
    setup = tiny_setup(tmp_path)  # intermediate_size = 4 * hidden_size, as in the paper
    results = sharing.run(setup, log=lambda message: None)
    _check_outputs(setup, results, 4)
    params = {row["variant"]: row["parameters"] for row in results["variants"]}
    # The FFN holds twice the attention's weights, so sharing it saves more.
    assert params["all-shared"] < params["shared-FFN"] < params["shared-attention"] < params["not-shared"]
    assert {row["config"]["sharing"] for row in results["variants"]} == {"all", "attention", "ffn", "none"}


def test_embedding_size_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setattr(embedding_size, "EMBEDDING_SIZES", (16,))
    setup = tiny_setup(tmp_path)
    results = embedding_size.run(setup, log=lambda message: None)
    _check_outputs(setup, results, 4)  # E in {16, H=32} x {all-shared, not-shared}
    rows = {row["variant"]: row for row in results["variants"]}
    assert set(rows) == {"all-shared E=16", "all-shared E=H", "not-shared E=16", "not-shared E=H"}
    assert rows["all-shared E=H"]["config"]["embedding_size"] == setup.hidden_size
    for name in ("all-shared", "not-shared"):
        assert rows[f"{name} E=16"]["parameters"] < rows[f"{name} E=H"]["parameters"]
    for size in ("16", "H"):
        assert rows[f"all-shared E={size}"]["parameters"] < rows[f"not-shared E={size}"]["parameters"]
