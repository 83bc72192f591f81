"""BigBird's block-sparse attention (ITC), the pattern of Zaheer et al. 2020 (arXiv 2007.14062), figure 1.

The sequence is cut into blocks of `block_size` tokens. With nb blocks:
- the first and the last query block are global: they attend to every key (figure 1d, rows);
- every other query block i attends to 5 + r key blocks: the first and the last (global,
  figure 1d, columns), its sliding window i-1, i, i+1 (figure 1b), and r random blocks
  (figure 1a). For i = 1 and i = nb-2 the window already holds a global block, whose second
  slot is switched off, so those rows see 4 + r distinct blocks (as in BigBird's code).

The math is gather and softmax: the key and value blocks of each query block are gathered by
index, the padding bias is gathered with them, and the softmax runs over the gathered keys only.
Memory grows as T * (5 + r) * block_size instead of T * T. Written in `keras.ops` alone: the same
layer on TensorFlow, JAX and PyTorch.
"""

import zlib

import keras
import numpy as np
from absl import logging
from keras import ops

from albert_tf.config import min_sparse_length
from albert_tf.layers.attention_mask import MASK_ADDER

_LEAST_WORD = -(2**31)  # below every allowed block's word: int32's minimum


def _int32_range(start, stop, shape):
    """start..stop-1 as int32 (`stop` may be a tensor of a graph), reshaped to `shape`."""
    return ops.reshape(ops.arange(start, stop, dtype="int32"), shape)


def _as_int32(number):
    """A Python integer's low 32 bits as a signed int32 value."""
    low = number & 0xFFFFFFFF
    return low - 2**32 if low >= 2**31 else low


def _shift_right(words, bits):
    """Logical right shift of int32 words (`right_shift` is arithmetic on signed integers)."""
    return ops.right_shift(words, bits) + ops.where(words < 0, 1 << (32 - bits), 0)


def _mix(words):
    """A bijection of 32-bit words that scrambles every bit (Wellons' "lowbias32"); int32
    products wrap around the same way on every backend and in LiteRT."""
    words = ops.bitwise_xor(words, _shift_right(words, 16))
    words = ops.multiply(words, 0x7FEB352D)
    words = ops.bitwise_xor(words, _shift_right(words, 15))
    words = ops.multiply(words, 0x846CA68B - 2**32)
    return ops.bitwise_xor(words, _shift_right(words, 16))


def random_block_words(num_blocks, num_heads, seed):
    """int32 [heads, nb - 2, nb]: a pseudo-random word for each head, middle query block and key
    block, a function of (seed, head, query block, key block) alone, whatever nb is.

    Why not a random op: Philox and friends draw different streams on each backend, and NumPy's
    generator cannot run in a graph whose length is known only when it runs (a SavedModel's or a
    LiteRT model's). Integer hashing gives the same bits in all of them, and the words of one
    row are distinct (a bijection of distinct counters), so no ranking below meets a tie.
    """
    head = _int32_range(0, num_heads, (-1, 1, 1))
    query_block = _int32_range(1, num_blocks - 1, (1, -1, 1))
    key_block = _int32_range(0, num_blocks, (1, 1, -1))
    return _mix(_mix(_mix(ops.bitwise_xor(head, _as_int32(seed))) + query_block) + key_block)


def draw_random_blocks(num_blocks, num_heads, num_random_blocks, seed):
    """The random key blocks of each head and middle query block: int32 [heads, nb - 2, r].

    Query block i (1 <= i <= nb-2) takes the r blocks of highest `random_block_words` among
    those it does not already see: not the global first and last, not its window i-1..i+1. The
    words are iid-like, so that is a uniform draw without replacement; it is a function of
    `seed` (the same pattern at every call, on every backend, in every export). `num_blocks`
    may be a tensor of a graph. Needs nb >= 5 + r (BigBird's length rule gives more).
    """
    if num_random_blocks == 0:
        return ops.zeros((num_heads, num_blocks - 2, 0), "int32")
    query_blocks = _int32_range(1, num_blocks - 1, (-1, 1))
    key_blocks = _int32_range(0, num_blocks, (1, -1))
    allowed = ops.logical_and(
        ops.logical_and(key_blocks > 0, key_blocks < num_blocks - 1), ops.abs(key_blocks - query_blocks) > 1)
    words = ops.where(allowed, random_block_words(num_blocks, num_heads, seed), _LEAST_WORD)
    return ops.cast(ops.top_k(words, k=num_random_blocks)[1], "int32")


def key_block_table(num_blocks, random_blocks):
    """Which key blocks each middle query block attends, and which of those slots count.

    `random_blocks` int [heads, nb - 2, r] -> (int32 [heads, nb - 2, 5 + r]: first, i-1, i, i+1,
    the r random, last; float32 [nb - 2, 5 + r]: 0 where the slot repeats a window block).
    """
    random_blocks = ops.cast(random_blocks, "int32")
    heads, rows, num_random = ops.shape(random_blocks)
    query_block = _int32_range(1, num_blocks - 1, (-1, 1))
    fixed = ops.concatenate([query_block * 0, query_block - 1, query_block, query_block + 1], axis=1)

    def for_every_head(blocks):
        return ops.broadcast_to(ops.expand_dims(blocks, 0), (heads, rows, blocks.shape[-1]))

    table = ops.concatenate(
        [for_every_head(fixed), random_blocks, for_every_head(query_block * 0 + num_blocks - 1)], axis=-1)
    counts = ops.concatenate(
        [
            ops.cast(query_block != 1, "float32"),  # block 0 is in row 1's window
            ops.ones((rows, 3 + num_random)),
            ops.cast(query_block != num_blocks - 2, "float32"),  # the last, in row nb-2's
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

    def call(self, query, key, value, bias, scale, dense_attention, training=None):
        length = query.shape[2]
        threshold = min_sparse_length(self.block_size, self.num_random_blocks)
        if length is None:  # known when the graph runs (TensorFlow's graphs of unknown length)
            return ops.cond(
                ops.shape(query)[2] > threshold,
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
        batch, heads, length, width = ops.shape(query)  # ints; scalar tensors where a graph leaves them open
        padding = -length % self.block_size
        query, key, value = (ops.pad(t, [[0, 0], [0, 0], [0, padding], [0, 0]]) for t in (query, key, value))
        key_bias = ops.pad(bias[:, 0, 0, :], [[0, 0], [0, padding]], constant_values=MASK_ADDER)  # [B, T']
        num_blocks = (length + padding) // self.block_size

        query_blocks = ops.reshape(query, (batch, heads, num_blocks, self.block_size, width))
        # Global rows: the first and the last query block against every key.
        global_query = ops.concatenate([query_blocks[:, :, 0], query_blocks[:, :, -1]], axis=2)
        global_context = self._attend(global_query, key, value, ops.expand_dims(key_bias, (1, 2)), scale, training)
        first, last = ops.split(global_context, 2, axis=2)

        # Middle rows: each query block against its gathered key blocks.
        table, counts = key_block_table(num_blocks, self._random_blocks(num_blocks, heads))
        # One gather over the heads' blocks side by side: head n's block j is row n * nb + j.
        flat_table = ops.reshape(table + _int32_range(0, heads, (-1, 1, 1)) * num_blocks, (-1,))

        def gathered(t):  # [B, N, T', d] -> [B, N, nb-2, (5+r) * block_size, d]
            picked = ops.take(ops.reshape(t, (batch, heads * num_blocks, self.block_size * width)), flat_table, axis=1)
            return ops.reshape(picked, (batch, heads, num_blocks - 2, -1, width))

        slot_bias = ops.expand_dims(1.0 - counts, (0, 1, 4)) * MASK_ADDER
        gathered_bias = ops.take(ops.reshape(key_bias, (batch, num_blocks, self.block_size)), table, axis=1)
        gathered_bias = ops.reshape(gathered_bias + slot_bias, (batch, heads, num_blocks - 2, 1, -1))
        middle = self._attend(query_blocks[:, :, 1:-1], gathered(key), gathered(value), gathered_bias,
                              scale, training)

        context = ops.concatenate([ops.expand_dims(first, 2), middle, ops.expand_dims(last, 2)], axis=2)
        context = ops.reshape(context, (batch, heads, num_blocks * self.block_size, width))
        query_mask = ops.expand_dims(ops.cast(key_bias == 0.0, context.dtype), (1, 3))
        return (context * query_mask)[:, :, :length]

    def _attend(self, query, key, value, bias, scale, training):
        """softmax(query key^T * scale + bias) value, the softmax in float32 as the dense path's."""
        scores = ops.einsum("...qd,...kd->...qk", query, key)
        weights = ops.softmax(ops.cast(scores, "float32") * scale + bias, axis=-1)
        weights = self.dropout(ops.cast(weights, query.dtype), training=training)
        return ops.matmul(weights, value)

    def _random_blocks(self, num_blocks, num_heads):
        if self.random_blocks is None:
            return draw_random_blocks(num_blocks, num_heads, self.num_random_blocks, self.seed)
        pattern = ops.convert_to_tensor(self.random_blocks, "int32")
        if isinstance(num_blocks, int) and pattern.shape[1] != num_blocks - 2:
            raise ValueError(f"{self.name}: `random_blocks` is for {pattern.shape[1] + 2} blocks of "
                             f"{self.block_size} tokens, the input has {num_blocks}.")
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
