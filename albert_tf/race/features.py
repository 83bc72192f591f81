"""RACE examples -> four `[CLS] article [SEP] question+option [SEP]` rows each, as TFRecords.

As the original: the question + option keeps its last `max_qa_length` pieces, the article is
cut from its end to fit `max_seq_length`; the four rows are padded to `max_seq_length` and
stored flattened ([4 x max_seq_length], the original's layout) with the answer's index.
"""

import hashlib
import json

import tensorflow as tf

from albert_tf.training.feature_cache import check_feature_file, read_sidecar
from albert_tf.io_utils import atomic_open, atomic_output
from albert_tf.preprocessors.packing import choice_kept_lengths, packed_ids
from albert_tf.progress import Progress
from albert_tf.training.training_order import shuffled_repeats
from albert_tf.race.examples import NUM_CHOICES


def choice_rows(example, tokenizer, max_seq_length, max_qa_length):
    """(input_ids, segment_ids) for each of the example's options, unpadded (by the rules
    `MultipleChoicePreprocessor` applies in graph: `albert_tf.preprocessors.packing`)."""
    article = tokenizer.encode(example.article)
    rows = []
    for qa_text in example.qa_texts:
        qa = tokenizer.encode(qa_text)
        keep_context, keep_qa = choice_kept_lengths(len(article), len(qa), max_seq_length, max_qa_length)
        rows.append(packed_ids(article[:keep_context], qa[len(qa) - keep_qa:], tokenizer.cls_id, tokenizer.sep_id))
    return rows


def _padded(values, length):
    return values + [0] * (length - len(values))


def write_features(examples, tokenizer, max_seq_length, max_qa_length, path):
    progress = Progress(f"features {path}", total=len(examples), unit="examples")
    with atomic_output(path) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        for example in examples:
            input_ids, input_mask, segment_ids = [], [], []
            for ids, segments in choice_rows(example, tokenizer, max_seq_length, max_qa_length):
                input_ids += _padded(ids, max_seq_length)
                input_mask += _padded([1] * len(ids), max_seq_length)
                segment_ids += _padded(segments, max_seq_length)
            features = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=value)) for name, value in (
                ("input_ids", input_ids), ("input_mask", input_mask), ("segment_ids", segment_ids),
                ("label_ids", [example.label]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
            progress.update()
    progress.close()


def cached_features(examples, source, tokenizer, cache_dir, max_seq_length, max_qa_length):
    """Path of the feature file of `examples` (named `source`, e.g. "dev-middle"), built once (a cached
    file is read through first: `feature_cache.check_feature_file`)."""
    digest = hashlib.sha1()
    with tf.io.gfile.GFile(tokenizer.spm_model_file, "rb") as handle:
        digest.update(handle.read())
    for example in examples:
        digest.update(json.dumps([example.example_id, example.article, example.qa_texts, example.label]).encode())
    digest.update(f"{tokenizer.do_lower_case}|{max_seq_length}|{max_qa_length}".encode())
    path = f"{cache_dir}/race_{source}_{max_seq_length}_{digest.hexdigest()[:12]}.tf_record"
    done_path = path + ".json"
    if tf.io.gfile.exists(done_path):
        check_feature_file(path, _parser(max_seq_length), read_sidecar(path).get("num_examples"))
        return path
    tf.io.gfile.makedirs(cache_dir)
    write_features(examples, tokenizer, max_seq_length, max_qa_length, path)
    with atomic_open(done_path, "w") as handle:
        json.dump({"num_examples": len(examples)}, handle)
    return path


def _parser(max_seq_length):
    shape = [NUM_CHOICES * max_seq_length]
    spec = {name: tf.io.FixedLenFeature(shape, tf.int64) for name in ("input_ids", "input_mask", "segment_ids")}
    spec["label_ids"] = tf.io.FixedLenFeature([], tf.int64)

    def parse(record):
        parsed = tf.io.parse_single_example(record, spec)
        rows = {name: tf.reshape(tf.cast(parsed[key], tf.int32), [NUM_CHOICES, max_seq_length])
                for name, key in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                                  ("input_type_ids", "segment_ids"))}
        return rows, tf.cast(parsed["label_ids"], tf.int32)

    return parse


def make_dataset(path, batch_size, max_seq_length, training=False, seed=None, shuffle_buffer=100_000):
    """(inputs [B, 4, max_seq_length] each, label [B]) batches; training data shuffled and repeated."""
    dataset = tf.data.TFRecordDataset(path)
    if training:
        dataset = shuffled_repeats(dataset, shuffle_buffer, seed)
    dataset = dataset.map(_parser(max_seq_length), num_parallel_calls=tf.data.AUTOTUNE).batch(batch_size, drop_remainder=training)
    return dataset.prefetch(tf.data.AUTOTUNE)
