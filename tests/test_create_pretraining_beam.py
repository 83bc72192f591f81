"""The Beam pipeline (DirectRunner) writes the same bytes as the local builder.

Needs requirements-beam.txt (apache-beam). Beam is imported inside the test, so that without it
this test fails on its own instead of stopping the collection of the whole suite.
"""

import pytest

from data_prep.create_pretraining_data import build

SPM_MODEL = "data/albert_spm/30k-clean.model"
CORPUS = "data/corpus/sample.txt"
SETTINGS = {"spm_model_file": SPM_MODEL, "max_seq_length": 64, "max_predictions_per_seq": 10,
            "dupe_factor": 2, "num_output_shards": 3, "input_chunk_bytes": 16384}


@pytest.mark.slow
def test_direct_runner_output_is_identical_to_the_local_build(tmp_path):
    from data_prep import beam_pipeline  # pylint: disable=g-import-not-at-top

    with open(CORPUS, "rb") as handle:
        text = handle.read(60_000)
    corpus_path = tmp_path / "corpus.txt"
    corpus_path.write_bytes(text[:text.rindex(b"\n") + 1])
    local = build(input_file=str(corpus_path), output_file=str(tmp_path / "local" / "train"),
                  num_workers=1, show_progress=False, **SETTINGS)["stats"]
    beam = beam_pipeline.run(["--runner=DirectRunner"], input_file=str(corpus_path),
                             output_file=str(tmp_path / "beam" / "train"), **SETTINGS)
    assert len(beam["output_files"]) == 3
    for local_path, beam_path in zip(local["output_files"], beam["output_files"]):
        with open(local_path, "rb") as local_file, open(beam_path, "rb") as beam_file:
            local_bytes = local_file.read()
            assert local_bytes and local_bytes == beam_file.read()
    assert {k: v for k, v in beam.items() if k != "output_files"} == \
        {k: v for k, v in local.items() if k != "output_files"}
