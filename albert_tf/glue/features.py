"""GLUE examples -> `[CLS] A [SEP] (B [SEP])` ids, cached as TFRecords, batched with dynamic padding.

Features are built as the original builds them (`preprocess_text`, SentencePiece, pairs trimmed
from the end of the longer segment), but stored unpadded: a batch is padded only to its longest
row (rounded up to a multiple of 8 to bound the number of shapes XLA compiles), which gives the
same logits as padding to `max_seq_length` because padded positions are masked out.
"""

import hashlib
import json

import tensorflow as tf

from albert_tf.choices import PADDING_MODES
from albert_tf.training.feature_cache import check_feature_file, read_sidecar
from albert_tf.training.token_features import backbone_inputs
from albert_tf.io_utils import atomic_open, atomic_output
from albert_tf.preprocessors.packing import packed_ids, special_tokens
from albert_tf.progress import Progress
from albert_tf.training.training_order import shuffled_repeats
from albert_tf.text.tokenization import truncate_seq_pair

LENGTH_MULTIPLE = 8
# "bucketed" groups training rows whose lengths fall in the same band of this many tokens.
BUCKET_WIDTH = 16


def example_ids(example, tokenizer, max_seq_length):
    """(input_ids, segment_ids) of one example, exactly as the original's feature builder (by the
    rules `ClassifierPreprocessor` applies in graph: `albert_tf.preprocessors.packing`)."""
    tokens_a = tokenizer.encode(example.text_a)
    tokens_b = tokenizer.encode(example.text_b) if example.text_b is not None else None
    if tokens_b is not None:
        truncate_seq_pair(tokens_a, tokens_b, max_seq_length - special_tokens(2))
    else:
        tokens_a = tokens_a[: max_seq_length - special_tokens(1)]
    return packed_ids(tokens_a, tokens_b, tokenizer.cls_id, tokenizer.sep_id)


def label_value(task, label):
    """The stored label: the class index, the STS-B score, or 0 for unlabelled test rows."""
    if label is None:
        return 0.0 if task.is_regression else 0
    return float(label) if task.is_regression else task.labels.index(label)


def cache_key(task, split, example_set, tokenizer, max_seq_length):
    """A short hash of everything the features depend on, so a stale cache is never read."""
    spm_digest = ""
    if tokenizer.spm_model_file:
        with tf.io.gfile.GFile(tokenizer.spm_model_file, "rb") as handle:
            spm_digest = hashlib.sha1(handle.read()).hexdigest()
    source_stat = ""
    if tf.io.gfile.exists(example_set.source):
        stat = tf.io.gfile.stat(example_set.source)
        source_stat = f"{stat.length}:{stat.mtime_nsec}"
    parts = [task.name, split, example_set.source, source_stat, spm_digest,
             str(tokenizer.do_lower_case), str(max_seq_length), str(len(example_set.examples))]
    return hashlib.sha1("|".join(parts).encode("utf-8")).hexdigest()[:12]


def write_features(task, examples, tokenizer, max_seq_length, path):
    """Writes one TFRecord per example: `input_ids`, `segment_ids` (unpadded) and `label_ids`."""
    progress = Progress(f"features {path}", total=len(examples), unit="examples")
    with atomic_output(path) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        for example in examples:
            input_ids, segment_ids = example_ids(example, tokenizer, max_seq_length)
            label = label_value(task, example.label)
            label_feature = (
                tf.train.Feature(float_list=tf.train.FloatList(value=[label]))
                if task.is_regression
                else tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))
            )
            features = {
                "input_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=input_ids)),
                "segment_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=segment_ids)),
                "label_ids": label_feature,
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
            progress.update()
    progress.close()


def cached_features(task, split, example_set, tokenizer, max_seq_length, cache_dir):
    """Path of the split's feature file under `cache_dir`, building it unless a valid one exists."""
    key = cache_key(task, split, example_set, tokenizer, max_seq_length)
    path = f"{cache_dir}/{task.name}_{split}_{max_seq_length}_{key}.tf_record"
    meta_path = path + ".json"
    if tf.io.gfile.exists(meta_path):  # read through once: a damaged file is named, not a trace mid-training
        check_feature_file(path, _parse(task), read_sidecar(path).get("num_examples"))
    else:
        tf.io.gfile.makedirs(cache_dir)
        write_features(task, example_set.examples, tokenizer, max_seq_length, path)
        with atomic_open(meta_path, "w") as handle:
            json.dump({"num_examples": len(example_set.examples), "source": example_set.source,
                       "num_skipped_rows": example_set.num_skipped}, handle)
    return path


def _parse(task):
    label_dtype = tf.float32 if task.is_regression else tf.int64
    spec = {
        "input_ids": tf.io.RaggedFeature(tf.int64),
        "segment_ids": tf.io.RaggedFeature(tf.int64),
        "label_ids": tf.io.FixedLenFeature([], label_dtype),
    }

    def parse(record):
        parsed = tf.io.parse_single_example(record, spec)
        label = parsed["label_ids"]
        label = label[tf.newaxis] if task.is_regression else tf.cast(label, tf.int32)
        return backbone_inputs(parsed), label

    return parse


def _round_up_length(features, label):
    length = tf.shape(features["input_word_ids"])[1]
    extra = (-length) % LENGTH_MULTIPLE
    return {name: tf.pad(value, [[0, 0], [0, extra]]) for name, value in features.items()}, label


def make_dataset(task, path, batch_size, max_seq_length, padding="dynamic", training=False, seed=None,
                 shuffle_buffer=100_000):
    """(features, label) batches from a feature file; training data is shuffled and repeated.

    `padding="fixed"` pads every batch to `max_seq_length` (the original's behaviour, for
    comparison); "dynamic" pads each batch to its longest row, rounded up to a multiple of 8
    (the same numbers as "fixed", less work); "bucketed" also batches training rows of similar
    length together (bands of `BUCKET_WIDTH` tokens), so short rows are not padded to a long
    neighbour: less work again, but other batches than "dynamic", so results differ as between
    seeds. Evaluation data (`training=False`) keeps its order: "bucketed" pads it as "dynamic".
    """
    if padding not in PADDING_MODES:
        raise ValueError(f"padding must be one of {PADDING_MODES}, got {padding!r}")
    dataset = tf.data.TFRecordDataset(path)
    if training:
        dataset = shuffled_repeats(dataset, shuffle_buffer, seed)
    dataset = dataset.map(_parse(task), num_parallel_calls=tf.data.AUTOTUNE)
    if padding == "fixed":
        shapes = ({name: [max_seq_length] for name in ("input_word_ids", "input_mask", "input_type_ids")},
                  [1] if task.is_regression else [])
        dataset = dataset.padded_batch(batch_size, padded_shapes=shapes)
    elif padding == "bucketed" and training:
        boundaries = list(range(BUCKET_WIDTH + 1, max_seq_length + 1, BUCKET_WIDTH))
        dataset = dataset.bucket_by_sequence_length(
            lambda features, label: tf.shape(features["input_word_ids"])[0],
            bucket_boundaries=boundaries,
            bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
        ).map(_round_up_length)
    else:
        dataset = dataset.padded_batch(batch_size).map(_round_up_length)
    return dataset.prefetch(tf.data.AUTOTUNE)
