"""The order of fine-tuning's training examples: a pure function of the seed and the position.

`dataset.shuffle(seed=s, reshuffle_each_iteration=True).repeat()` draws each pass's order from a
seed generator shared by every iterator over the dataset, and Keras' `fit` under a strategy first
reads one batch from a throwaway iterator (to build the model), whose prefetching draws a
varying number of passes' seeds. The order of the batches trained on then depends on how far
that iterator read (further on a resumed run, which skips the batches already used), so a
resumed run did not continue with the batches an uninterrupted one trained on. Here pass `n` is
shuffled with a seed made from `seed` and `n` alone: every iterator yields the same batches,
whatever global seed `tf.random.set_seed` (or `keras.utils.set_random_seed`) was given.
"""

import tensorflow as tf

# Passes per seed before two seeds' pass seeds could meet (seed * PASSES + pass).
PASSES = 2**20
# The graph-level seed each pass's shuffle is drawn with: TensorFlow's own default (the orders are
# those of an unset global seed), set in the pass's graph so that the global seed plays no part. Left
# to it, a global seed of 0 made TensorFlow compare the tensor pass seed with 0 in Python (an error).
GRAPH_SEED = 87654321


def shuffled_repeats(dataset, buffer_size, seed=None):
    """`dataset` repeated forever, each pass shuffled (`buffer_size`) in an order fixed by `seed`
    and the pass number (with `seed=None`, an order of its own each time it is iterated)."""
    if seed is None:
        return dataset.shuffle(buffer_size, reshuffle_each_iteration=True).repeat()

    def one_pass(number):
        tf.random.set_seed(GRAPH_SEED)  # traced in its own graph: sets that graph's seed only
        return dataset.shuffle(buffer_size, seed=seed * PASSES + number % PASSES, reshuffle_each_iteration=False)

    return tf.data.Dataset.counter().flat_map(one_pass)
