"""sop_vs_nsp end to end at a tiny scale, and the label semantics of its two kinds of data."""

import json
import os

from albert_cli.experiments import paper, sop_vs_nsp
from albert_cli.experiments.data import pretraining_files
from albert_tf.text.tokenization import AlbertTokenizer
from tests.experiments_test_data import SPM_MODEL, png_size, read_examples, segment_markers, tiny_setup


def _pair_kinds(path):
    """Counts of (label, "AB" in order | "BA" swapped | "other-doc") over a file's examples."""
    tokenizer = AlbertTokenizer(SPM_MODEL)
    kinds = {}
    for example in read_examples(path):
        a, b = segment_markers(example, tokenizer)
        if not a or not b:
            continue
        if {doc for doc, _ in a} != {doc for doc, _ in b}:
            kind = "other-doc"
        elif max(line for _, line in a) < min(line for _, line in b):
            kind = "AB"
        elif max(line for _, line in b) < min(line for _, line in a):
            kind = "BA"
        else:
            kind = "mixed"
        key = (int(example["next_sentence_labels"][0]), kind)
        kinds[key] = kinds.get(key, 0) + 1
    return kinds


def test_sop_and_nsp_data_mean_what_they_say(tmp_path):
    setup = tiny_setup(tmp_path)
    sop = _pair_kinds(pretraining_files(setup, "sop")[0])
    nsp = _pair_kinds(pretraining_files(setup, "nsp")[0])
    # SOP: 0 = A then B of one document; 1 = the same two segments swapped.
    assert set(sop) == {(0, "AB"), (1, "BA")}, sop
    # NSP: 0 = A then its true continuation; 1 = B from another document.
    assert set(nsp) == {(0, "AB"), (1, "other-doc")}, nsp
    assert min(sop.values()) >= 5 and min(nsp.values()) >= 5


def test_sop_vs_nsp_end_to_end(tmp_path):
    setup = tiny_setup(tmp_path)
    results = sop_vs_nsp.run(setup, log=lambda message: None)
    rows = {row["variant"]: row for row in results["variants"]}
    assert set(rows) == {"none", "sop", "nsp", "always the commoner label"}
    for task in ("sop", "nsp"):
        assert 0.5 <= results["majority_accuracy"][task] <= 1.0
        assert rows["always the commoner label"][f"{task}_accuracy"] == results["majority_accuracy"][task]
    del rows["always the commoner label"]
    for row in rows.values():
        for key in ("mlm_accuracy", "nsp_accuracy", "sop_accuracy", "dev_score"):
            assert 0.0 <= row[key] <= 1.0, (key, row[key])
        assert row["heldout_sop_eval_steps"] == setup.eval_batches
        for key, value in paper.SENTENCE_LOSS[row["variant"]].items():
            assert row[f"paper_{key}"] == paper.shown(value)
    # Same model and seed, different sentence pairs or loss: no two runs may be the same run.
    assert rows["sop"]["parameters"] == rows["nsp"]["parameters"] == rows["none"]["parameters"]
    mlm_losses = {name: row["heldout_sop_masked_lm_loss"] for name, row in rows.items()}
    assert len(set(mlm_losses.values())) == 3, mlm_losses
    with open(os.path.join(setup.output_dir, "results.json")) as handle:
        assert [row["variant"] for row in json.load(handle)["variants"][:3]] == ["none", "nsp", "sop"]
    with open(os.path.join(setup.output_dir, "results.md")) as handle:
        table = handle.read()
    assert "| none |" in table and "| sop |" in table and "| nsp |" in table
    assert f"| {paper.SENTENCE_LOSS['nsp']['sop']} |" in table
    assert png_size(os.path.join(setup.output_dir, "figure.png"))[0] > 100
