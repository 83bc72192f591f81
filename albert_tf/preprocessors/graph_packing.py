"""`packing`'s layout in graph ops: `[CLS] first [SEP] (second [SEP])` rows of ragged id tensors, for
every in-graph preprocessor (`AlbertInputPacker`, the SQuAD and RACE rows)."""

import tensorflow as tf

from albert_tf.preprocessors.packing import PAIR_TYPE_IDS


def packed_rows(segments, cls_id, sep_id, *values):
    """The word ids [B, (n)] of `[CLS] first [SEP] (second [SEP])` for one or two ragged id tensors
    [B, (n)] of one dtype, then for each of `values` (one int per part, as `packing.PAIR_TYPE_IDS`) the
    rows holding each part's value at its positions."""
    rows = segments[0].nrows()
    cls = tf.RaggedTensor.from_tensor(tf.fill(tf.stack([rows, 1]), tf.cast(cls_id, segments[0].dtype)))
    sep = tf.RaggedTensor.from_tensor(tf.fill(tf.stack([rows, 1]), tf.cast(sep_id, segments[0].dtype)))
    parts = [cls]
    for segment in segments:
        parts += [segment, sep]
    return (concat_rows(parts),) + tuple(
        concat_rows([tf.ones_like(part) * value for part, value in zip(parts, part_values)])
        for part_values in values)


def type_id_rows(segments, cls_id, sep_id):
    """(word ids, type ids) of `packed_rows`: type 0 up to the first [SEP], 1 after."""
    return packed_rows(segments, cls_id, sep_id, PAIR_TYPE_IDS)


def concat_rows(parts):
    """`tf.concat(parts, axis=1)` for ragged [batch, (n)] tensors, without the Transpose of int64 row
    indices that tf.concat runs, which oneDNN declines with an error line on stderr: the parts' rows
    stacked, taken row i of each part in turn, and merged."""
    stacked = tf.concat(parts, axis=0)
    num_rows = parts[0].nrows()
    order = tf.range(len(parts) * num_rows)
    in_order = tf.gather(stacked, (order % len(parts)) * num_rows + order // len(parts))
    return tf.RaggedTensor.from_uniform_row_length(in_order, len(parts)).merge_dims(1, 2)
