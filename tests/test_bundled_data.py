"""The no-flags pretraining data: its statistics record the paths as a user names them and count
the documents of the training split."""

import json

from albert_cli import bundled_data
from pretraining_test_data import REPO_ROOT


def test_statistics_name_the_bundled_model_relative_to_the_checkout_and_count_its_documents(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    # Five documents, one longer than a 1 KiB input chunk; the last two are held out.
    documents = ["\n".join(f"Line {line} of document {index}, long enough to fill the chunk." for line in range(lines))
                 for index, lines in enumerate([3, 40, 2, 4, 3])]
    corpus.write_text("\n\n".join(documents) + "\n")
    monkeypatch.setattr(bundled_data, "PRETRAINING_CORPUS", str(corpus))
    monkeypatch.setattr(bundled_data, "build", _with_small_chunks(bundled_data.build))
    monkeypatch.chdir(REPO_ROOT)
    train, heldout = bundled_data.build_bundled_data(str(tmp_path / "data"), 64, 10, 1, 1)
    for records, count in ((train, 3), (heldout, 2)):
        with open(records + ".stats.json") as handle:
            stats = json.load(handle)
        assert stats["settings"]["spm_model_file"] == "data/albert_spm/30k-clean.model"
        assert stats["documents"] == count


def _with_small_chunks(build):
    return lambda **settings: build(input_chunk_bytes=1024, show_progress=False, **settings)
