"""Test helpers for GLUE: small GLUE-layout directories and a TFDS-format copy built from the shipped TSVs."""

import os

import tensorflow as tf
import tensorflow_datasets as tfds

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GLUE_DIR = os.path.join(REPO, "data", "glue")
SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
TINY_CONFIG = os.path.join(REPO, "configs", "albert_tiny.json")


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
