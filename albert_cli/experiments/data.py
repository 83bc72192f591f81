"""Pretraining data for an experiment: the corpus split by document, then built in-process.

The held-out documents are set aside as text before any instance is built (as the bundled
default of run_pretraining.py does), so held-out metrics never see a trained-on sentence. Each
kind of sentence pair (ALBERT's sentence order, BERT's next sentence) is built from the same split.
"""

import os

import tensorflow as tf

from albert_cli.bundled_data import split_documents

SENTENCE_TASKS = ("sop", "nsp")


def pretraining_files(setup, sentence_task="sop"):
    """(train TFRecord, held-out TFRecord) with `sentence_task` pairs; built once, then reused.

    `sop`: label 1 = the two segments in swapped order; `nsp` (`--random_next_sentence`): label 1 =
    segment B from another document. Either way label 0 is the true continuation.
    """
    if sentence_task not in SENTENCE_TASKS:
        raise ValueError(f"sentence_task must be one of {SENTENCE_TASKS}, got {sentence_task!r}")
    from data_prep.create_pretraining_data import build  # pylint: disable=g-import-not-at-top

    data_dir = setup.path("data")
    tf.io.gfile.makedirs(data_dir)
    text = {split: os.path.join(data_dir, f"{split}.txt") for split in ("train", "heldout")}
    if not all(os.path.exists(path) for path in text.values()):
        split_documents(setup.corpus_file, text["train"], text["heldout"], setup.heldout_documents)
    records = {}
    for split, text_file in text.items():
        name = f"{split}-{sentence_task}-seq{setup.max_seq_length}-pred{setup.max_predictions_per_seq}.tfrecord"
        records[split] = os.path.join(data_dir, name)
        if not os.path.exists(records[split]):
            build(
                num_workers=1, show_progress=False,
                input_file=text_file, output_file=records[split], spm_model_file=setup.spm_model_file,
                max_seq_length=setup.max_seq_length, max_predictions_per_seq=setup.max_predictions_per_seq,
                dupe_factor=setup.dupe_factor, random_seed=setup.seed,
                random_next_sentence=sentence_task == "nsp",
            )
    return records["train"], records["heldout"]
