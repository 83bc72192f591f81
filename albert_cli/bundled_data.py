"""The no-flags default: TFRecords built from the bundled corpus sample, with a held-out split.

The original evaluated on its training files; here the last documents of the sample are set
aside as text before any instance is built, so no sentence of the held-out set is trained on.
"""

import os
import sys

import tensorflow as tf

from albert_cli.bundled import PRETRAINING_CORPUS, SPM_MODEL
from albert_tf.io_utils import atomic_open
from data_prep.create_pretraining_data import build


def split_documents(corpus_path, train_path, heldout_path, heldout_documents):
    """Writes all but the last `heldout_documents` documents (blank-line separated) to
    `train_path` and the rest to `heldout_path`; returns the two counts."""
    with tf.io.gfile.GFile(corpus_path) as handle:
        documents = [doc.strip("\n") for doc in handle.read().split("\n\n") if doc.strip()]
    if len(documents) <= heldout_documents:
        raise ValueError(f"{corpus_path}: {len(documents)} documents; need more than {heldout_documents} to hold some out")
    splits = ((train_path, documents[:-heldout_documents]), (heldout_path, documents[-heldout_documents:]))
    for path, chosen in splits:
        with atomic_open(path) as handle:
            handle.write("\n\n".join(chosen) + "\n")
    return len(documents) - heldout_documents, heldout_documents


def as_user_names_it(path):
    """`path` relative to the working directory when it lies under it (in a checkout,
    `data/albert_spm/30k-clean.model`), so that the statistics file records no machine's path."""
    real, here = os.path.realpath(path), os.path.realpath(os.getcwd())
    return os.path.relpath(real, here) if os.path.commonpath([real, here]) == here else path


def build_bundled_data(data_dir, max_seq_length, max_predictions_per_seq, dupe_factor, random_seed, heldout_documents=2):
    """Returns (train_file, heldout_file), building them with `data_prep`'s builder (in this
    process) unless they already exist (a rerun or a resumed run reuses them)."""
    tf.io.gfile.makedirs(data_dir)
    names = {"train": "train", "heldout": "heldout"}
    text = {split: os.path.join(data_dir, f"{name}.txt") for split, name in names.items()}
    records = {
        split: os.path.join(data_dir, f"{name}-seq{max_seq_length}-pred{max_predictions_per_seq}.tfrecord")
        for split, name in names.items()
    }
    if all(tf.io.gfile.exists(path) for path in records.values()):
        return records["train"], records["heldout"]
    split_documents(PRETRAINING_CORPUS, text["train"], text["heldout"], heldout_documents)
    for split in names:
        sys.stderr.write(f"building the {split} data from the bundled corpus sample: {records[split]}\n")
        build(num_workers=1, input_file=text[split], output_file=records[split],
              spm_model_file=as_user_names_it(SPM_MODEL), max_seq_length=max_seq_length,
              max_predictions_per_seq=max_predictions_per_seq, dupe_factor=dupe_factor, random_seed=random_seed)
    return records["train"], records["heldout"]
