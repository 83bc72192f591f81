"""The order of fine-tuning's training examples: a pure function of the seed and the position.

`dataset.shuffle(seed=s, reshuffle_each_iteration=True).repeat()` draws each pass's order from a
seed generator shared by every iterator over the dataset, and Keras' `fit` under a strategy first
reads one batch from a throwaway iterator (to build the model), whose prefetching draws a
varying number of passes' seeds. The order of the batches trained on then depends on how far
that iterator read (further on a resumed run, which skips the batches already used), so a
resumed run did not continue with the batches an uninterrupted one trained on. Here pass `n` is
shuffled with a seed made from `seed` and `n` alone: every iterator yields the same batches.
"""

import tensorflow as tf

# Passes per seed before two seeds' pass seeds could meet (seed * PASSES + pass).
PASSES = 2**20


def shuffled_repeats(dataset, buffer_size, seed=None):
    """`dataset` repeated forever, each pass shuffled (`buffer_size`) in an order fixed by `seed`
    and the pass number (with `seed=None`, an order of its own each time it is iterated)."""
    if seed is None:
        return dataset.shuffle(buffer_size, reshuffle_each_iteration=True).repeat()
    return tf.data.Dataset.counter().flat_map(
        lambda number: dataset.shuffle(buffer_size, seed=seed * PASSES + number % PASSES,
                                       reshuffle_each_iteration=False))
