"""SQuAD examples -> fixed-length windows (`[CLS] question [SEP] paragraph-window [SEP]`), as TFRecords.

As the original builds them, by the rules the export's graph follows too (`SquadWindowing`): the
question keeps its first `max_query_length` pieces; the paragraph is cut into windows of at most
`max_seq_length - len(question) - 3` pieces that start `doc_stride` pieces apart; each piece is
scored in the window where it has the most context ("max context", used when reading answers
back); a training answer becomes the first and last piece of its span, and a window that does not
hold the whole answer (or a v2.0 unanswerable question) points at [CLS] (position 0) and counts as
impossible. `p_mask` is 1 where no answer may start or end (question, [SEP], padding). A paragraph
whose pieces cannot be aligned to its characters drops its questions, and the count of dropped
questions is reported.
"""

import dataclasses
import hashlib
import json

import tensorflow as tf
from absl import logging

from albert_tf.training.feature_cache import check_feature_file, read_sidecar
from albert_tf.training.token_features import backbone_inputs
from albert_tf.io_utils import atomic_open, atomic_output
from albert_tf.preprocessors.squad_windowing import SquadWindowing
from albert_tf.progress import Progress
from albert_tf.training.training_order import shuffled_repeats
from albert_tf.squad.alignment import align

# The original numbers windows from this id on (its `unique_id`).
FIRST_UNIQUE_ID = 1_000_000_000

_INT_LIST_FIELDS = ("input_ids", "segment_ids", "p_mask", "tok_start_to_orig_index", "tok_end_to_orig_index",
                    "token_is_max_context")
_INT_FIELDS = ("unique_id", "example_index", "doc_span_index", "doc_offset", "start_position", "end_position",
               "is_impossible")


@dataclasses.dataclass
class SquadFeature:
    """One window of one example; the `tok_*` lists and `token_is_max_context` cover its paragraph pieces."""

    unique_id: int
    example_index: int
    doc_span_index: int
    input_ids: list
    segment_ids: list
    p_mask: list
    doc_offset: int
    tok_start_to_orig_index: list
    tok_end_to_orig_index: list
    token_is_max_context: list
    start_position: int = 0
    end_position: int = 0
    is_impossible: int = 0

    def to_example(self):
        features = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in getattr(self, name)]))
                    for name in _INT_LIST_FIELDS}
        features.update({name: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(getattr(self, name))]))
                         for name in _INT_FIELDS})
        return tf.train.Example(features=tf.train.Features(feature=features))

    @classmethod
    def from_example(cls, serialized):
        fields = tf.train.Example.FromString(serialized).features.feature
        values = {name: list(fields[name].int64_list.value) for name in _INT_LIST_FIELDS}
        values.update({name: fields[name].int64_list.value[0] for name in _INT_FIELDS})
        return cls(**values)


def doc_windows(num_tokens, max_tokens_for_doc, doc_stride):
    """(start, length) of each window over `num_tokens` pieces; the last one ends at the end."""
    windows, start = [], 0
    while start < num_tokens:
        length = min(num_tokens - start, max_tokens_for_doc)
        windows.append((start, length))
        if start + length == num_tokens:
            break
        start += min(length, doc_stride)
    return windows


def max_context_window(windows, position):
    """Index of the window where piece `position` has the most context (min of left and right
    context, plus 0.01 x window length to break ties in favour of longer windows)."""
    best_score, best_index = None, None
    for index, (start, length) in enumerate(windows):
        end = start + length - 1
        if not start <= position <= end:
            continue
        score = min(position - start, end - position) + 0.01 * length
        if best_score is None or score > best_score:
            best_score, best_index = score, index
    return best_index


@dataclasses.dataclass
class FeatureStats:
    """What feature building did: examples in, questions dropped (unaligned), windows out."""

    num_examples: int = 0
    num_dropped_examples: int = 0
    num_features: int = 0
    num_positive: int = 0
    num_impossible: int = 0
    num_out_of_span: int = 0


def convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                                 is_training):
    """Yields `SquadFeature`s for `examples` (a list of `SquadExample`); returns `FeatureStats`."""
    if not tokenizer.is_spm:
        raise ValueError("SQuAD features need a SentencePiece tokenizer (spm_model_file): the character "
                         "alignment works on SentencePiece pieces")
    windowing = SquadWindowing(max_seq_length, doc_stride, max_query_length)
    stats = FeatureStats(num_examples=len(examples))
    alignments = {}  # many questions share a paragraph
    unique_id = FIRST_UNIQUE_ID
    for example_index, example in enumerate(examples):
        query_ids = tokenizer.encode(example.question_text)[:max_query_length]
        windowing.check_room(len(query_ids))
        max_tokens_for_doc = windowing.doc_budget(len(query_ids))
        if example.paragraph_text not in alignments:
            alignments[example.paragraph_text] = align(
                example.paragraph_text, tokenizer.tokenize(example.paragraph_text), tokenizer.do_lower_case)
        alignment = alignments[example.paragraph_text]
        if alignment is None:
            logging.warning("question %s dropped: its paragraph's pieces do not align with its text",
                            example.qas_id)
            stats.num_dropped_examples += 1
            continue
        answer_span = None
        if is_training and not example.is_impossible:
            end_char = example.start_position + len(example.answer_text) - 1
            answer_span = alignment.token_span(example.start_position, end_char)
        doc_ids = tokenizer.convert_tokens_to_ids(alignment.pieces)
        windows = doc_windows(len(doc_ids), max_tokens_for_doc, doc_stride)
        doc_offset = windowing.doc_offset(len(query_ids))
        for window_index, (start, length) in enumerate(windows):
            positions = range(start, start + length)
            input_ids, segment_ids, p_mask = windowing.packed_window(query_ids, doc_ids[start:start + length],
                                                                     tokenizer.cls_id, tokenizer.sep_id)
            feature = SquadFeature(
                unique_id=unique_id,
                example_index=example_index,
                doc_span_index=window_index,
                input_ids=input_ids,
                segment_ids=segment_ids,
                p_mask=p_mask,
                doc_offset=doc_offset,
                tok_start_to_orig_index=list(alignment.tok_start_to_orig_index[start:start + length]),
                tok_end_to_orig_index=list(alignment.tok_end_to_orig_index[start:start + length]),
                token_is_max_context=[int(max_context_window(windows, p) == window_index) for p in positions],
                is_impossible=int(example.is_impossible),
            )
            if answer_span is not None:
                if start <= answer_span[0] and answer_span[1] < start + length:
                    feature.start_position = answer_span[0] - start + doc_offset
                    feature.end_position = answer_span[1] - start + doc_offset
                else:
                    feature.is_impossible = 1
                    stats.num_out_of_span += 1
            unique_id += 1
            stats.num_features += 1
            if feature.is_impossible:
                stats.num_impossible += 1
            else:
                stats.num_positive += 1
            yield feature
    return stats


def cache_key(path, tokenizer, *settings):
    """A short hash of everything the features depend on, so a stale cache is never read."""
    with tf.io.gfile.GFile(tokenizer.spm_model_file, "rb") as handle:
        spm_digest = hashlib.sha1(handle.read()).hexdigest()
    stat = tf.io.gfile.stat(path)
    parts = [path, f"{stat.length}:{stat.mtime_nsec}", spm_digest, str(tokenizer.do_lower_case), *map(str, settings)]
    return hashlib.sha1("|".join(parts).encode("utf-8")).hexdigest()[:12]


def cached_features(source_path, examples, tokenizer, cache_dir, max_seq_length, doc_stride, max_query_length,
                    is_training, version_2_with_negative):
    """(TFRecord path, `FeatureStats` as a dict) for `examples` of `source_path`, built once per setting
    (a cached file is read through first: `feature_cache.check_feature_file`)."""
    key = cache_key(source_path, tokenizer, max_seq_length, doc_stride, max_query_length, is_training,
                    version_2_with_negative)
    split = "train" if is_training else "predict"
    path = f"{cache_dir}/squad_{split}_{max_seq_length}_{key}.tf_record"
    stats_path = path + ".json"
    if tf.io.gfile.exists(stats_path):
        stats = read_sidecar(path)
        check_feature_file(path, _parse_every_field, stats.get("num_features"))
        return path, stats
    tf.io.gfile.makedirs(cache_dir)
    progress = Progress(f"features {path}", total=len(examples), unit="examples")
    features = convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                                            is_training)
    last_example = -1
    with atomic_output(path) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        while True:
            try:
                feature = next(features)
            except StopIteration as done:
                stats = done.value
                break
            writer.write(feature.to_example().SerializeToString())
            progress.update(feature.example_index - last_example)
            last_example = feature.example_index
    progress.close()
    with atomic_open(stats_path, "w") as handle:
        json.dump(dataclasses.asdict(stats), handle, indent=2)
    logging.info("SQuAD features %s: %s", path, stats)
    return path, dataclasses.asdict(stats)


def read_features(path):
    """Every `SquadFeature` of a feature file, in order (for post-processing)."""
    return [SquadFeature.from_example(record.numpy()) for record in tf.data.TFRecordDataset(path)]


def _parse_every_field(record):
    """Every field `SquadFeature.from_example` reads, with its type (to check a cached file)."""
    spec = {name: tf.io.RaggedFeature(tf.int64) for name in _INT_LIST_FIELDS}
    spec.update({name: tf.io.FixedLenFeature([], tf.int64) for name in _INT_FIELDS})
    return tf.io.parse_single_example(record, spec)


def _parse(record):
    spec = {name: tf.io.RaggedFeature(tf.int64) for name in ("input_ids", "segment_ids", "p_mask")}
    spec.update({name: tf.io.FixedLenFeature([], tf.int64)
                 for name in ("unique_id", "start_position", "end_position", "is_impossible")})
    parsed = tf.io.parse_single_example(record, spec)
    features = {
        **backbone_inputs(parsed),
        "p_mask": tf.cast(parsed["p_mask"], tf.int32),
        "start_positions": tf.cast(parsed["start_position"], tf.int32),
    }
    labels = {
        "start_positions": tf.cast(parsed["start_position"], tf.int32),
        "end_positions": tf.cast(parsed["end_position"], tf.int32),
        "is_impossible": tf.cast(parsed["is_impossible"], tf.float32),
    }
    return features, labels


def make_dataset(path, batch_size, max_seq_length, training=False, seed=None, shuffle_buffer=100_000):
    """(features, labels) batches padded to `max_seq_length` (p_mask pads with 1: no answer there).

    Training data is shuffled and repeated; otherwise the file order is kept (it matches
    `read_features`).
    """
    dataset = tf.data.TFRecordDataset(path)
    if training:
        dataset = shuffled_repeats(dataset, shuffle_buffer, seed)
    dataset = dataset.map(_parse, num_parallel_calls=tf.data.AUTOTUNE)
    sequence = [max_seq_length]
    shapes = ({"input_word_ids": sequence, "input_mask": sequence, "input_type_ids": sequence, "p_mask": sequence,
               "start_positions": []},
              {"start_positions": [], "end_positions": [], "is_impossible": []})
    padding = ({"input_word_ids": 0, "input_mask": 0, "input_type_ids": 0, "p_mask": 1, "start_positions": 0},
               {"start_positions": 0, "end_positions": 0, "is_impossible": 0.0})
    dataset = dataset.padded_batch(batch_size, padded_shapes=shapes, padding_values=padding,
                                   drop_remainder=training)
    return dataset.prefetch(tf.data.AUTOTUNE)
