"""A tiny setup for the experiments' end-to-end tests: a synthetic corpus, a few MRPC rows, a
model of a few thousand weights (plus the 30k vocabulary), a couple of steps of everything."""

import os
import re

import numpy as np
import tensorflow as tf

from albert_cli.experiments.setup import Setup
from albert_tf.text.tokenization import AlbertTokenizer
from tests.glue_test_data import SPM_MODEL, head_of_shipped

NUM_DOCUMENTS = 10
LINES_PER_DOCUMENT = 10
MARKER = re.compile(r"document (\d) line (\d) \.")


def write_corpus(path):
    """Documents whose every line says which document and line it is (one digit each)."""
    documents = ["\n".join(f"document {doc} line {line} ." for line in range(LINES_PER_DOCUMENT))
                 for doc in range(NUM_DOCUMENTS)]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n\n".join(documents) + "\n")
    return path


def tiny_setup(tmp_path, **changes):
    values = dict(
        output_dir=str(tmp_path / "out"), corpus_file=write_corpus(str(tmp_path / "corpus.txt")),
        glue_data_dir=head_of_shipped(str(tmp_path / "glue"), "MRPC", 8, splits=("train", "dev")),
        kernels="reference", hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=128, embedding_size=16, max_seq_length=32, max_predictions_per_seq=4,
        dupe_factor=2, heldout_documents=3, train_batch_size=4, train_steps=2, eval_batches=2,
        finetune_steps=2, finetune_batch_size=4, finetune_max_seq_length=32,
    )
    values.update(changes)
    return Setup(**values)


def read_examples(path):
    """Every record of a pretraining TFRecord as a dict of NumPy arrays."""
    examples = []
    for record in tf.data.TFRecordDataset(path):
        features = tf.train.Example.FromString(record.numpy()).features.feature
        examples.append({name: np.array(feature.int64_list.value or feature.float_list.value)
                         for name, feature in features.items()})
    return examples


def segment_markers(example, tokenizer=None):
    """((doc, line) markers of segment A, of segment B), read from the unmasked token ids."""
    tokenizer = tokenizer or AlbertTokenizer(SPM_MODEL)
    ids = example["input_ids"].copy()
    for position, original, weight in zip(example["masked_lm_positions"], example["masked_lm_ids"],
                                          example["masked_lm_weights"]):
        if weight > 0:
            ids[position] = original
    segments = []
    for segment in (0, 1):
        chosen = [int(token) for token, kind, real in zip(ids, example["segment_ids"], example["input_mask"])
                  if real and kind == segment and token not in (tokenizer.cls_id, tokenizer.sep_id)]
        text = "".join(tokenizer.convert_ids_to_tokens(chosen)).replace("\u2581", " ").strip()
        segments.append([(int(doc), int(line)) for doc, line in MARKER.findall(text)])
    return tuple(segments)


def png_size(path):
    """(width, height) from a PNG header; raises if the file is not a PNG."""
    with open(path, "rb") as handle:
        header = handle.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
