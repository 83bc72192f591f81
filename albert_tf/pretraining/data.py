"""tf.data input pipeline for ALBERT pretraining TFRecords (ours or the original script's).

Files hold the original's features (reference section 4.5); batches carry the model's names:

| TFRecord feature       | batch key              | dtype, shape                   |
|------------------------|------------------------|--------------------------------|
| `input_ids`            | `input_word_ids`       | int32 [B, max_seq_length]      |
| `input_mask`           | `input_mask`           | int32 [B, max_seq_length]      |
| `segment_ids`          | `input_type_ids`       | int32 [B, max_seq_length]      |
| `masked_lm_positions`  | `masked_lm_positions`  | int32 [B, max_predictions]     |
| `masked_lm_ids`        | `masked_lm_ids`        | int32 [B, max_predictions]     |
| `masked_lm_weights`    | `masked_lm_weights`    | float32 [B, max_predictions]   |
| `next_sentence_labels` | `next_sentence_labels` | int32 [B] (the SOP label)      |

`token_boundary` is not read (the original never released the on-the-fly masking it was for).
Batches always have exactly the batch size (`drop_remainder=True`): TPUs need static shapes.
"""

import tensorflow as tf

from albert_tf.error_text import error_line
from albert_tf.io_utils import special_file_kind
from albert_tf.pretraining.schema import FEATURES

FEATURE_NAMES = {
    "input_ids": "input_word_ids",
    "input_mask": "input_mask",
    "segment_ids": "input_type_ids",
    "masked_lm_positions": "masked_lm_positions",
    "masked_lm_ids": "masked_lm_ids",
    "masked_lm_weights": "masked_lm_weights",
    "next_sentence_labels": "next_sentence_labels",
}


def expand_file_patterns(file_patterns):
    """Comma-separated string or list of paths/globs -> sorted file list (error if one matches nothing)."""
    if isinstance(file_patterns, str):
        file_patterns = file_patterns.split(",")
    files = []
    for pattern in (p.strip() for p in file_patterns):
        if not pattern:
            continue
        matches = sorted(tf.io.gfile.glob(pattern))
        if not matches:
            raise ValueError(f"pretraining data: {pattern!r} matches no file")
        for path in matches:  # a FIFO would be waited on for ever
            kind = special_file_kind(path)
            if kind:
                raise ValueError(f"pretraining data: {path} is {kind}, not a regular file; expected a TFRecord file")
        files.extend(matches)
    if not files:
        raise ValueError("pretraining data: no file pattern given")
    return files

_READ_FEATURES = tuple(feature for feature in FEATURES if feature.name in FEATURE_NAMES)


def check_file(path, max_seq_length, max_predictions_per_seq, vocab_size=None, type_vocab_size=None):
    """Raises ValueError naming the file and feature if its first record has other lengths, a
    feature of another type, or (given the sizes) an id outside the model's vocabularies.

    Returns whether the file holds any record. Catches the common mistake (data made with --max_seq_length=128 read with 512) before
    training starts, with a message that says what to change instead of a parse error.
    """
    try:
        first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
        if first is None:
            return False  # an empty shard is valid
        example = tf.train.Example.FromString(first.numpy())
    except (tf.errors.OpError, ValueError) as error:
        raise ValueError(f"{path}: not a TFRecord file of tf.train.Example ({error_line(error)})") from None
    features = example.features.feature
    for schema in _READ_FEATURES:
        name, flag = schema.name, schema.length_setting
        expected = schema.length(max_seq_length, max_predictions_per_seq)
        if name not in features:
            raise ValueError(f"{path}: feature {name!r} is missing; expected ALBERT pretraining data "
                             f"(data_prep.create_pretraining_data)")
        feature = features[name]
        kind = feature.WhichOneof("kind")
        if kind != _KINDS[schema.dtype]:
            raise ValueError(f"{path}: feature {name!r} is stored as {kind}, expected "
                             f"{_KINDS[schema.dtype]} (ALBERT pretraining data)")
        found = len(feature.int64_list.value) or len(feature.float_list.value)
        if found != expected:
            setting = f"{flag}={expected}; the file was written with {flag}={found}" if flag else "one label"
            raise ValueError(f"{path}: feature {name!r} has {found} values but {expected} are "
                             f"expected ({setting})")
    for name, limit in _id_limits(vocab_size, type_vocab_size).items():
        values = features[name].int64_list.value
        if values and not 0 <= min(values) <= max(values) < limit:
            raise ValueError(f"{path}: feature {name!r} holds ids in [{min(values)}, {max(values)}], "
                             f"outside the model's [0, {limit}) (albert_config_file)")
    return True


_KINDS = {"int64": "int64_list", "float32": "float_list"}


def _id_limits(vocab_size, type_vocab_size):
    """{feature: exclusive upper bound} of the ids the model embeds (None: unchecked)."""
    limits = {"input_ids": vocab_size, "masked_lm_ids": vocab_size, "segment_ids": type_vocab_size}
    return {name: limit for name, limit in limits.items() if limit is not None}


def find_bad_file(files, max_seq_length, max_predictions_per_seq, vocab_size=None, type_vocab_size=None):
    """(path, message) of the first file that fails to read or parse in full, or None.

    For the error path of training: a data error inside the input pipeline does not say which
    file it came from, so each file is read again on its own.
    """
    for path in files:
        dataset = tf.data.TFRecordDataset(path).batch(1024).map(
            lambda records: _parse(records, max_seq_length, max_predictions_per_seq, vocab_size, type_vocab_size))
        try:
            for _ in dataset:
                pass
        except tf.errors.OpError as error:
            return path, error_line(error)
    return None


def _parse(serialized, max_seq_length, max_predictions_per_seq, vocab_size=None, type_vocab_size=None):
    spec = {feature.name: tf.io.FixedLenFeature([feature.length(max_seq_length, max_predictions_per_seq)],
                                                tf.as_dtype(feature.dtype))
            for feature in _READ_FEATURES}
    parsed = tf.io.parse_example(serialized, spec)
    # A GPU's embedding lookup returns zeros for an id out of range: guard it here, in the input.
    checks = [tf.debugging.assert_less(parsed[name], tf.cast(limit, tf.int64),
                                       message=f"feature {name}: an id is >= {limit} (the model's vocabulary)")
              for name, limit in _id_limits(vocab_size, type_vocab_size).items()]
    checks += [tf.debugging.assert_non_negative(parsed[name], message=f"feature {name}: a negative id")
               for name in _id_limits(vocab_size, type_vocab_size)]
    with tf.control_dependencies(checks):
        parsed = {name: tf.identity(value) for name, value in parsed.items()}
    batch = {}
    for name, key in FEATURE_NAMES.items():
        value = parsed[name]
        batch[key] = value if value.dtype == tf.float32 else tf.cast(value, tf.int32)
    batch["next_sentence_labels"] = tf.squeeze(batch["next_sentence_labels"], axis=-1)
    return batch


def pretraining_dataset(file_patterns, max_seq_length, max_predictions_per_seq, batch_size,
                        is_training=True, input_context=None, seed=None, shuffle_buffer_size=10000,
                        cycle_length=8, validate_files=True, vocab_size=None, type_vocab_size=None):
    """Batches of pretraining features (see the module docstring for names and shapes).

    `batch_size` is global; with a `tf.distribute.InputContext` (from
    `distribute_datasets_from_function`) each input pipeline reads its share of the files (or
    of the records, if there are fewer files than pipelines) and batches
    `input_context.get_per_replica_batch_size(batch_size)` examples. Training data is file-
    shuffled, interleaved, record-shuffled and repeated; evaluation data is read once, in
    order. `seed` makes the order reproducible. `validate_files` checks each file's first
    record against the lengths (see `check_file`). Given `vocab_size` / `type_vocab_size`, every
    batch is checked to hold only ids the model can embed (an InvalidArgumentError otherwise).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    files = expand_file_patterns(file_patterns)
    if validate_files:
        non_empty = [check_file(path, max_seq_length, max_predictions_per_seq, vocab_size, type_vocab_size)
                     for path in files]
        if not any(non_empty):
            raise ValueError(f"pretraining data: the files hold no records: {', '.join(files)}")
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)

    dataset = tf.data.Dataset.from_tensor_slices(files)
    shard_records = False
    if input_context is not None and input_context.num_input_pipelines > 1:
        if len(files) >= input_context.num_input_pipelines:
            dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        else:
            shard_records = True
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed, reshuffle_each_iteration=True).repeat()
    dataset = dataset.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(cycle_length, len(files)),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=seed is not None or not is_training,
    )
    if shard_records:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda records: _parse(records, max_seq_length, max_predictions_per_seq, vocab_size,
                                                 type_vocab_size),
                          num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)
