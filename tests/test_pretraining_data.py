"""`albert_tf.pretraining.data.pretraining_dataset`: names, dtypes, batching, sharding, errors."""

import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.pretraining.data import pretraining_dataset
from data_prep.create_pretraining_data import build

SPM_MODEL = "data/albert_spm/30k-clean.model"
CORPUS = "data/corpus/sample.txt"
SEQ, PREDICTIONS = 64, 10


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Three shards built by our builder from the start of the bundled corpus."""
    directory = tmp_path_factory.mktemp("pretraining")
    with open(CORPUS, "rb") as handle:
        text = handle.read(60_000)
    corpus_path = directory / "corpus.txt"
    corpus_path.write_bytes(text[:text.rindex(b"\n") + 1])
    result = build(input_file=str(corpus_path), output_file=str(directory / "train"),
                   spm_model_file=SPM_MODEL, num_output_shards=3, input_chunk_bytes=16384,
                   max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS, dupe_factor=1,
                   num_workers=1, show_progress=False)
    return result["stats"]["output_files"]


def raw_examples(path):
    examples = []
    for record in tf.data.TFRecordDataset(path):
        features = tf.train.Example.FromString(record.numpy()).features.feature
        examples.append({name: list(features[name].int64_list.value or features[name].float_list.value)
                         for name in features})
    return examples


def dataset(files, **kwargs):
    kwargs.setdefault("batch_size", 8)
    return pretraining_dataset(files, SEQ, PREDICTIONS, **kwargs)


def test_batches_have_the_model_names_dtypes_and_static_shapes(shards):
    batch = next(iter(dataset(shards, seed=1)))
    expected = {
        "input_word_ids": (tf.int32, [8, SEQ]), "input_mask": (tf.int32, [8, SEQ]),
        "input_type_ids": (tf.int32, [8, SEQ]), "masked_lm_positions": (tf.int32, [8, PREDICTIONS]),
        "masked_lm_ids": (tf.int32, [8, PREDICTIONS]), "masked_lm_weights": (tf.float32, [8, PREDICTIONS]),
        "next_sentence_labels": (tf.int32, [8]),
    }
    assert {k: (v.dtype, v.shape.as_list()) for k, v in batch.items()} == expected
    spec = dataset(shards, seed=1).element_spec
    assert spec["input_word_ids"].shape.as_list() == [8, SEQ]  # drop_remainder: static batch


def test_evaluation_reads_each_record_once_in_order(shards):
    examples = raw_examples(shards[0])
    batches = list(dataset(shards[0], is_training=False))
    assert len(batches) == len(examples) // 8 > 0
    first = batches[0]
    for row, example in enumerate(examples[:8]):
        assert first["input_word_ids"][row].numpy().tolist() == example["input_ids"]
        assert first["input_type_ids"][row].numpy().tolist() == example["segment_ids"]
        assert first["masked_lm_ids"][row].numpy().tolist() == example["masked_lm_ids"]
        assert first["masked_lm_weights"][row].numpy().tolist() == example["masked_lm_weights"]
        assert int(first["next_sentence_labels"][row]) == example["next_sentence_labels"][0]


def test_training_repeats_and_shuffles_reproducibly(shards):
    total = sum(len(raw_examples(path)) for path in shards)
    steps = total // 8 + 3  # more batches than one epoch holds
    first = [b["input_word_ids"].numpy() for b in dataset(shards, seed=3).take(steps)]
    again = [b["input_word_ids"].numpy() for b in dataset(shards, seed=3).take(steps)]
    assert len(first) == steps
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    in_order = next(iter(dataset(shards, is_training=False)))["input_word_ids"].numpy()
    assert not np.array_equal(first[0], in_order)


@pytest.mark.parametrize("num_files", [3, 1])
def test_input_context_gives_per_replica_batches_and_disjoint_shards(shards, num_files):
    files = shards[:num_files]  # 3 files: shard files; 1 file: shard records
    seen = []
    for pipeline_id in range(2):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline_id,
                                             num_replicas_in_sync=2)
        batches = list(dataset(files, batch_size=8, is_training=False, input_context=context))
        assert batches and all(b["input_word_ids"].shape[0] == 4 for b in batches)
        seen.append({tuple(row) for b in batches for row in b["input_word_ids"].numpy().tolist()})
    assert seen[0] and seen[1] and not seen[0] & seen[1]


def test_distribute_datasets_from_function(shards):
    strategy = tf.distribute.get_strategy()
    distributed = strategy.distribute_datasets_from_function(
        lambda context: dataset(shards, batch_size=4, input_context=context, seed=0))
    batch = next(iter(distributed))
    assert batch["input_word_ids"].shape == (4, SEQ)


def test_reads_examples_serialised_by_tensorflow_itself(tmp_path):
    # A record as the original script writes it (TF's own proto classes), token_boundary included.
    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    features = {
        "input_ids": ints([2, 48, 25, 3, 21, 1289, 3] + [0] * (SEQ - 7)),
        "input_mask": ints([1] * 7 + [0] * (SEQ - 7)),
        "segment_ids": ints([0] * 4 + [1] * 3 + [0] * (SEQ - 7)),
        "token_boundary": ints([1] * 7 + [0] * (SEQ - 7)),
        "masked_lm_positions": ints([2] + [0] * (PREDICTIONS - 1)),
        "masked_lm_ids": ints([25] + [0] * (PREDICTIONS - 1)),
        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0] + [0.0] * (PREDICTIONS - 1))),
        "next_sentence_labels": ints([1]),
    }
    path = str(tmp_path / "original.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(2):
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    batch = next(iter(dataset(path, batch_size=2, is_training=False)))
    assert batch["input_word_ids"][0, :7].numpy().tolist() == [2, 48, 25, 3, 21, 1289, 3]
    assert batch["next_sentence_labels"].numpy().tolist() == [1, 1]


def test_length_mismatch_names_the_file_and_the_feature(shards):
    with pytest.raises(ValueError, match=rf"{shards[0]}: feature 'input_ids' has {SEQ} values but 128 "
                                         rf"are expected \(max_seq_length=128; the file was written "
                                         rf"with max_seq_length={SEQ}\)"):
        pretraining_dataset(shards, 128, PREDICTIONS, batch_size=8)
    with pytest.raises(ValueError, match=r"feature 'masked_lm_positions' has 10 values but 20 .*"
                                         r"max_predictions_per_seq=20"):
        pretraining_dataset(shards, SEQ, 20, batch_size=8)


def test_bad_file_arguments_are_reported(shards, tmp_path):
    with pytest.raises(ValueError, match="matches no file"):
        dataset([str(tmp_path / "nothing-*")])
    stats_json = os.path.join(os.path.dirname(shards[0]), "train.stats.json")
    with pytest.raises(ValueError, match="not a TFRecord file"):
        dataset(stats_json)
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="hold no records"):
        dataset(str(empty))
