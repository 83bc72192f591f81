"""BigBird's block-sparse attention (ITC), the pattern of Zaheer et al. 2020 (arXiv 2007.14062), figure 1.

The sequence is cut into blocks of `block_size` tokens. With nb blocks:
- the first and the last query block are global: they attend to every key (figure 1d, rows);
- every other query block i attends to 5 + r key blocks: the first and the last (global,
  figure 1d, columns), its sliding window i-1, i, i+1 (figure 1b), and r random blocks
  (figure 1a). For i = 1 and i = nb-2 the window already holds a global block, whose second
  slot is switched off, so those rows see 4 + r distinct blocks (as in BigBird's code).

The math is gather and softmax: the key and value blocks of each query block are gathered by
index, the padding bias is gathered with them, and the softmax runs over the gathered keys only.
Memory grows as T * (5 + r) * block_size instead of T * T.
"""

import zlib

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.config import min_sparse_length
from albert_tf.layers.attention_mask import MASK_ADDER


def draw_random_blocks(num_blocks, num_heads, num_random_blocks, seed, max_blocks=None):
    """The random key blocks of each head and middle query block: int32 [heads, nb - 2, r].

    Query block i (1 <= i <= nb-2) draws r distinct blocks uniformly from those it does not
    already see: not the global first and last, not its window i-1..i+1. The draw is a
    stateless Philox function of `seed` (the same pattern at every call, in every export);
    `num_blocks` may be a tensor. Needs nb >= 5 + r (BigBird's length rule gives more).

    With `max_blocks` (a Python int >= every nb the graph will see) the uniforms are a constant
    of the graph, cut from the draw for `max_blocks` (Philox fills a tensor in counter order, so
    a smaller draw is a prefix of a larger one; tested): the same pattern without the random op,
    for converters that have none (LiteRT).
    """
    query_blocks = tf.range(1, num_blocks - 1)[:, tf.newaxis]
    key_blocks = tf.range(num_blocks)[tf.newaxis, :]
    allowed = (key_blocks > 0) & (key_blocks < num_blocks - 1) & (tf.abs(key_blocks - query_blocks) > 1)
    shape = tf.stack([num_heads, num_blocks - 2, num_blocks])
    if max_blocks is None:
        noise = tf.random.stateless_uniform(shape, seed=[seed, 0], alg="philox")
    else:
        with tf.init_scope():  # computed once, eagerly: a constant in the traced graph
            stream = tf.random.stateless_uniform(
                [num_heads * (max_blocks - 2) * max_blocks], seed=[seed, 0], alg="philox").numpy()
        noise = tf.reshape(tf.constant(stream)[:tf.reduce_prod(shape)], shape)
    # The r largest of iid uniforms over the allowed blocks: a uniform draw without replacement.
    return tf.math.top_k(tf.where(allowed, noise, -1.0), k=num_random_blocks).indices


def key_block_table(num_blocks, random_blocks):
    """Which key blocks each middle query block attends, and which of those slots count.

    `random_blocks` int [heads, nb - 2, r] -> (int32 [heads, nb - 2, 5 + r]: first, i-1, i, i+1,
    the r random, last; float32 [nb - 2, 5 + r]: 0 where the slot repeats a window block).
    """
    random_blocks = tf.cast(random_blocks, tf.int32)
    heads, rows = tf.shape(random_blocks)[0], num_blocks - 2
    query_block = tf.range(1, num_blocks - 1)
    window = query_block[:, tf.newaxis] + tf.constant([-1, 0, 1])

    def for_every_head(blocks):
        return tf.broadcast_to(blocks, tf.stack([heads, rows, tf.shape(blocks)[-1]]))

    table = tf.concat(
        [
            for_every_head(tf.zeros([rows, 1], tf.int32)),
            for_every_head(window),
            random_blocks,
            for_every_head(tf.fill(tf.stack([rows, 1]), num_blocks - 1)),
        ],
        axis=-1,
    )
    ones = tf.ones([rows, 3 + tf.shape(random_blocks)[-1]])
    counts = tf.concat(
        [
            tf.cast(query_block != 1, tf.float32)[:, tf.newaxis],  # block 0 is in row 1's window
            ones,
            tf.cast(query_block != num_blocks - 2, tf.float32)[:, tf.newaxis],  # the last, in row nb-2's
        ],
        axis=-1,
    )
    return table, counts


@keras.saving.register_keras_serializable(package="albert_tf")
class BlockSparseAttention(keras.layers.Layer):
    """The attention weights and context of BigBird's ITC pattern, on heads already projected.

    Has no weights; the attention sub-layer calls it in place of dense attention. Sequences of
    `min_sparse_length` tokens or fewer run `dense_attention` (said once in the log); longer
    ones are padded to whole blocks (padding is masked and cut off again).

    Args:
        block_size: tokens per block.
        num_random_blocks: r, random key blocks per middle query block.
        attention_probs_dropout_prob: dropout on the attention weights.
        seed: seeds the random blocks (`draw_random_blocks`); None derives it from the layer's
            name, so every unshared sub-layer has its own pattern, the same after a reload.
        random_blocks: an explicit pattern, int [heads, nb - 2, r], used instead of the drawn
            one (for sequences of exactly that many blocks): to compare with another
            implementation's pattern.

    Call arguments: `query`, `key`, `value` [B, N, T, d], `bias` [B, 1, 1, T] (the dense
    path's additive mask), `scale`, `dense_attention` (a function of no arguments giving the
    dense context), `training`. Returns the context [B, N, T, d]; padded query rows are zero,
    as in BigBird.
    """

    def __init__(
        self,
        block_size,
        num_random_blocks,
        attention_probs_dropout_prob=0.0,
        seed=None,
        random_blocks=None,
        **kwargs,
    ):
        super().__init__(autocast=False, **kwargs)  # the bias stays float32
        self.block_size = block_size
        self.num_random_blocks = num_random_blocks
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.seed = zlib.crc32(self.name.encode()) & 0x7FFFFFFF if seed is None else seed
        self.random_blocks = None if random_blocks is None else np.asarray(random_blocks).tolist()
        self.dropout = keras.layers.Dropout(attention_probs_dropout_prob, dtype=self.dtype_policy, name="dropout")
        self._said_dense = set()
        self.max_length = None  # set by `constant_random_blocks`; a tracing choice, not config

    def call(self, query, key, value, bias, scale, dense_attention, training=None):
        length = query.shape[2]
        threshold = min_sparse_length(self.block_size, self.num_random_blocks)
        if length is None:  # known when the graph runs
            length = tf.shape(query)[2]
            return tf.cond(
                length > threshold,
                lambda: self._sparse(query, key, value, bias, scale, training),
                dense_attention,
            )
        if length > threshold:
            return self._sparse(query, key, value, bias, scale, training)
        if length not in self._said_dense:
            self._said_dense.add(length)
            logging.info(
                "%s: %d tokens <= (5 + 2 * num_random_blocks) * block_size = %d: dense attention.",
                self.name, length, threshold,
            )
        return dense_attention()

    def _sparse(self, query, key, value, bias, scale, training):
        length = tf.shape(query)[2]
        padding = -length % self.block_size
        query, key, value = (tf.pad(t, [[0, 0], [0, 0], [0, padding], [0, 0]]) for t in (query, key, value))
        key_bias = tf.pad(bias[:, 0, 0, :], [[0, 0], [0, padding]], constant_values=MASK_ADDER)  # [B, T']
        num_blocks = tf.shape(query)[2] // self.block_size

        def blocks(t):  # [B, ..., T', d?] -> [B, ..., nb, block_size, d?]
            shape = tf.shape(t)
            return tf.reshape(t, tf.concat([shape[:2], [num_blocks, self.block_size], shape[3:]], axis=0))

        query_blocks = blocks(query)
        # Global rows: the first and the last query block against every key.
        global_query = tf.concat([query_blocks[:, :, 0], query_blocks[:, :, -1]], axis=2)
        global_context = self._attend(global_query, key, value, tf.expand_dims(tf.expand_dims(key_bias, 1), 1),
                                      scale, training)
        first, last = tf.split(global_context, 2, axis=2)

        # Middle rows: each query block against its gathered key blocks.
        heads = query.shape[1] if query.shape[1] is not None else tf.shape(query)[1]
        table, counts = key_block_table(num_blocks, self._random_blocks(num_blocks, heads))
        batch_table = tf.broadcast_to(table, tf.concat([tf.shape(query)[:1], tf.shape(table)], axis=0))

        def gathered(t):  # [B, N, T', d] -> [B, N, nb-2, (5+r) * block_size, d]
            picked = tf.gather(blocks(t), batch_table, batch_dims=2)  # [B, N, nb-2, 5+r, bs, d]
            return tf.reshape(picked, tf.concat([tf.shape(picked)[:3], [-1, tf.shape(t)[-1]]], axis=0))

        slot_bias = (1.0 - counts)[tf.newaxis, tf.newaxis, :, :, tf.newaxis] * MASK_ADDER
        gathered_bias = tf.gather(tf.reshape(key_bias, [tf.shape(key_bias)[0], num_blocks, -1]), table, axis=1)
        gathered_bias = gathered_bias + slot_bias  # [B, N, nb-2, 5+r, bs]
        gathered_bias = tf.reshape(gathered_bias, tf.concat([tf.shape(gathered_bias)[:3], [1, -1]], axis=0))
        middle = self._attend(query_blocks[:, :, 1:-1], gathered(key), gathered(value), gathered_bias,
                              scale, training)

        context = tf.concat([first[:, :, tf.newaxis], middle, last[:, :, tf.newaxis]], axis=2)
        context = tf.reshape(context, tf.shape(query))
        query_mask = tf.expand_dims(tf.expand_dims(tf.cast(tf.equal(key_bias, 0.0), context.dtype), 1), -1)
        return (context * query_mask)[:, :, :length]

    def _attend(self, query, key, value, bias, scale, training):
        """softmax(query key^T * scale + bias) value, the softmax in float32 as the dense path's."""
        scores = tf.matmul(query, key, transpose_b=True)
        weights = tf.nn.softmax(tf.cast(scores, tf.float32) * scale + bias, axis=-1)
        weights = self.dropout(tf.cast(weights, query.dtype), training=training)
        return tf.matmul(weights, value)

    def _random_blocks(self, num_blocks, num_heads):
        if self.random_blocks is None:
            if self.max_length is None:
                return draw_random_blocks(num_blocks, num_heads, self.num_random_blocks, self.seed)
            return draw_random_blocks(num_blocks, num_heads, self.num_random_blocks, self.seed,
                                      max_blocks=-(-self.max_length // self.block_size))
        pattern = tf.constant(self.random_blocks, tf.int32)
        tf.debugging.assert_equal(
            tf.shape(pattern)[1], num_blocks - 2,
            message=f"{self.name}: `random_blocks` is for {pattern.shape[1] + 2} blocks of {self.block_size}",
        )
        return pattern

    def compute_output_shape(self, query_shape, *args, **kwargs):
        return query_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "block_size": self.block_size,
                "num_random_blocks": self.num_random_blocks,
                "attention_probs_dropout_prob": self.attention_probs_dropout_prob,
                "seed": self.seed,
                "random_blocks": self.random_blocks,
            }
        )
        return config


def constant_random_blocks(model, max_length):
    """Makes every `BlockSparseAttention` of `model` trace its random blocks from constants, for
    sequences up to `max_length` tokens (`draw_random_blocks`' `max_blocks`): the same pattern,
    with no random op in the graph."""
    for layer in model._flatten_layers(include_self=False):  # pylint: disable=protected-access
        if isinstance(layer, BlockSparseAttention):
            layer.max_length = max_length
