"""Paragraph-per-line text -> one sentence per line, with a held-out tail of every document.

The command is `python -m albert_cli.split_corpus`.

Why: the original's `create_pretraining_data` expects one sentence per line and packs
consecutive lines into segments; a paragraph longer than the sequence becomes one truncated
segment (bench/results/history.md measures the loss). Why a tail of every document rather than whole
documents: with a few long documents (books) whole ones would take a large share of the text or
leave a held-out set unlike the training text. The tail of each document becomes a document of
its own in `heldout.txt`, so no held-out sentence, and no sentence pair, is trained on.
"""

import glob
import os
import re
import runpy

from albert_tf.io_utils import atomic_open, refuse_overwriting_inputs

# A sentence ends at . ! or ? (and any closing quote or bracket) before a space and a capital,
# digit or opening quote/bracket; not after the abbreviations of titles.
_SENTENCE_END = re.compile(r"""[.!?]["')\]\u201d\u2019]*(\s+)(?=["'(\[\u201c\u2018A-Z0-9])""")
_TITLES = ("Mr.", "Mrs.", "Dr.", "St.", "Mme.", "Messrs.")


def split_sentences(paragraph):
    """The sentences of one paragraph (whitespace-trimmed, none empty)."""
    sentences, start = [], 0
    for end in _SENTENCE_END.finditer(paragraph):
        words = paragraph[start:end.start(1)].split()
        if words and words[-1].endswith(_TITLES) and words[-1].lstrip("\"'(\u201c\u2018") in _TITLES:
            continue
        sentences.append(paragraph[start:end.start(1)])
        start = end.end(1)
    sentences.append(paragraph[start:])
    return [sentence.strip() for sentence in sentences if sentence.strip()]


def read_documents(path, one_document_per_file=False):
    """Documents of `path`, each a list of its paragraphs. Default: a blank line ends a document
    and each line is a paragraph; `one_document_per_file`: the file is one document whose
    paragraphs are separated by blank lines, their hard-wrapped lines joined."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        blocks = handle.read().split("\n\n")
    if one_document_per_file:
        paragraphs = [" ".join(block.split()) for block in blocks]
        documents = [[paragraph for paragraph in paragraphs if paragraph]]
    else:
        documents = [[line for line in block.split("\n") if line.strip()] for block in blocks]
    return [document for document in documents if document]


def split_corpus(input_file, output_dir, heldout_fraction, one_document_per_file=False):
    """Writes `train.txt` and `heldout.txt` (one sentence per line) under `output_dir`: the last
    `heldout_fraction` of each document's paragraphs (at least one) are held out. `input_file`:
    comma-separated paths and/or globs (each pattern's matches sorted).
    Returns {"train": sentences, "heldout": sentences, "documents": count}."""
    if not 0 < heldout_fraction < 1:
        raise ValueError(f"--heldout_fraction must be in (0, 1), got {heldout_fraction}")
    paths = []
    for pattern in (part.strip() for part in input_file.split(",") if part.strip()):
        matches = sorted(glob.glob(pattern))
        if not matches or not all(os.path.isfile(match) for match in matches):
            raise FileNotFoundError(f"--input_file: {pattern!r} matches no file")
        paths.extend(matches)
    outputs = {split: os.path.join(output_dir, f"{split}.txt") for split in ("train", "heldout")}
    refuse_overwriting_inputs([("--output_dir", path) for path in outputs.values()],
                              [("--input_file", path) for path in paths])
    documents = [document for path in paths for document in read_documents(path, one_document_per_file)]
    if not documents:
        raise ValueError(f"--input_file: {input_file} has no text")
    os.makedirs(output_dir, exist_ok=True)
    splits = {"train": [], "heldout": []}
    for paragraphs in documents:
        if len(paragraphs) < 2:
            raise ValueError(f"--input_file: a document of {input_file} has {len(paragraphs)} line; "
                             "need at least 2 to hold out a tail (paragraph-per-line text expected)")
        cut = len(paragraphs) - max(1, round(heldout_fraction * len(paragraphs)))
        for split, part in (("train", paragraphs[:cut]), ("heldout", paragraphs[cut:])):
            splits[split].append([s for paragraph in part for s in split_sentences(paragraph)])
    counts = {"documents": len(documents)}
    for split, docs in splits.items():
        with atomic_open(outputs[split]) as handle:
            handle.write("\n\n".join("\n".join(doc) for doc in docs) + "\n")
        counts[split] = sum(len(doc) for doc in docs)
    return counts


if __name__ == "__main__":
    # The command (its flags and main) is albert_cli's; run by name, so the library imports none of it.
    runpy.run_module("albert_cli.split_corpus", run_name="__main__", alter_sys=True)
