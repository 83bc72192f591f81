"""Test helpers for GLUE: small GLUE-layout directories and a TFDS-format copy built from the shipped TSVs."""

import importlib.util
import os

import tensorflow as tf
import tensorflow_datasets as tfds

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GLUE_DIR = os.path.join(REPO, "data", "glue")
SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
TINY_CONFIG = os.path.join(REPO, "configs", "albert_tiny.json")


def load_bench_script(name):
    """A GLUE experiment script of `bench/` (not a package) as a module, to test its functions."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "bench", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_glue_file(data_dir, task_dir, name, lines):
    os.makedirs(os.path.join(data_dir, task_dir), exist_ok=True)
    path = os.path.join(data_dir, task_dir, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return path


def head_of_shipped(data_dir, task_dir, rows_per_split, splits=("train", "dev", "test")):
    """Copies the header and first rows of each shipped split of a task into `data_dir`."""
    for split in splits:
        with open(os.path.join(GLUE_DIR, task_dir, f"{split}.tsv"), encoding="utf-8") as handle:
            lines = handle.read().splitlines()[: rows_per_split + 1]
        write_glue_file(data_dir, task_dir, f"{split}.tsv", lines)
    return data_dir


def build_tfds_glue(data_dir, config, splits):
    """Writes a prepared TFDS `glue/<config>` under `data_dir` from {split: [feature dicts]}.

    The shards and metadata are what `download_and_prepare` would write, so the product's
    `tfds.load(..., download=False)` reads them unchanged.
    """
    builder = tfds.builder(f"glue/{config}", data_dir=data_dir)
    tf.io.gfile.makedirs(builder.data_dir)
    template = tfds.core.ShardedFileTemplate(
        data_dir=builder.data_dir, template="{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
        dataset_name="glue", filetype_suffix="tfrecord",
    )
    split_infos = []
    for split, rows in splits.items():
        split_template = template.replace(split=split)
        with tf.io.TFRecordWriter(os.fspath(split_template.sharded_filepath(shard_index=0, num_shards=1))) as writer:
            for row in rows:
                writer.write(builder.info.features.serialize_example(row))
        split_infos.append(tfds.core.SplitInfo(
            name=split, shard_lengths=[len(rows)], num_bytes=0, filename_template=split_template))
    builder.info.set_splits(tfds.core.SplitDict(split_infos))
    builder.info.write_to_directory(builder.data_dir)
    return data_dir


MNLI_LABELS = ("contradiction", "entailment", "neutral")
_MNLI_PREMISES = ["A man is playing a guitar on stage.", "Two dogs run through a field.",
                  "The woman is reading a book in the park.", "Children are building a sandcastle.",
                  "A chef cooks pasta in a busy kitchen.", "An old car is parked by the road."]
_MNLI_HYPOTHESES = ["A person is making music.", "The animals are asleep.", "Someone is outdoors.",
                    "Kids are at the beach.", "Nobody is cooking.", "A vehicle is near a street."]


def write_mnli(data_dir, rows_per_file, diagnostic_rows=0):
    """A small MNLI directory in GLUE's column layout; returns {file name: [(index, label)]}.

    Train rows have GLUE's 12 columns (label1, gold_label), dev rows its 16 (label1..label5,
    gold_label), test rows its 10 (no labels); indexes start at 100 * (file number) so each file's
    are distinct. With `diagnostic_rows`, also writes GLUE's AX `diagnostic/diagnostic.tsv`.
    """
    parse_columns = ["sentence1_binary_parse", "sentence2_binary_parse", "sentence1_parse", "sentence2_parse"]
    written = {}
    for number, (name, count) in enumerate(rows_per_file.items()):
        labelled = not name.startswith("test")
        label_columns = (["label1", "label2", "label3", "label4", "label5"] if name.startswith("dev") else ["label1"])
        header = ["index", "promptID", "pairID", "genre", *parse_columns, "sentence1", "sentence2"]
        if labelled:
            header += [*label_columns, "gold_label"]
        lines, rows = ["\t".join(header)], []
        for i in range(count):
            index, label = str(100 * number + i), MNLI_LABELS[i % 3]
            premise, hypothesis = _MNLI_PREMISES[i % 6], _MNLI_HYPOTHESES[(i + number) % 6]
            row = [index, str(i), f"{i}e", "fiction", "( x )", "( y )", "(ROOT x)", "(ROOT y)", premise, hypothesis]
            if labelled:
                row += [label] * len(label_columns) + [label]
            lines.append("\t".join(row))
            rows.append((index, label if labelled else None))
        write_glue_file(data_dir, "MNLI", name, lines)
        written[name] = rows
    if diagnostic_rows:
        lines = ["index\tsentence1\tsentence2"] + [
            f"{i}\t{_MNLI_PREMISES[i % 6]}\t{_MNLI_HYPOTHESES[(i + 3) % 6]}" for i in range(diagnostic_rows)]
        write_glue_file(data_dir, "diagnostic", "diagnostic.tsv", lines)
        written["diagnostic.tsv"] = [(str(i), None) for i in range(diagnostic_rows)]
    return written
