"""`[CLS] first [SEP] second [SEP]` rows of two ragged id tensors, in graph ops: the rows the SQuAD
and RACE exports build for their model (`AlbertInputPacker` pads to a fixed form instead)."""

import tensorflow as tf


def packed_pair(first, second, cls_id, sep_id, *part_values):
    """The word ids [B, (n)] of `[CLS] first [SEP] second [SEP]` for ragged ids `first`, `second`
    [B, (n)], then for each of `part_values` (five ints: one per part, in that order) the rows
    holding each part's value at its positions (type ids: (0, 0, 0, 1, 1))."""
    rows = first.nrows()
    cls = tf.RaggedTensor.from_tensor(tf.fill([rows, 1], tf.cast(cls_id, first.dtype)))
    sep = tf.RaggedTensor.from_tensor(tf.fill([rows, 1], tf.cast(sep_id, first.dtype)))
    parts = [cls, first, sep, second, sep]
    return (tf.concat(parts, 1),) + tuple(
        tf.concat([tf.ones_like(part) * value for part, value in zip(parts, values)], 1) for values in part_values)
