"""Fine-tuning's training order is a function of the seed and the position alone, so that a resumed
run (which skips the batches already used) trains on what an uninterrupted one would."""

import numpy as np
import tensorflow as tf

from albert_tf.training.training_order import shuffled_repeats


def batches(dataset, count):
    return [batch.numpy().tolist() for batch in dataset.take(count)]


def test_every_iterator_yields_the_same_passes_each_in_its_own_order():
    dataset = shuffled_repeats(tf.data.Dataset.range(10), buffer_size=100, seed=3).batch(5).prefetch(4)
    throwaway = iter(dataset)  # as Keras' fit reads a batch to build the model, prefetching more
    next(throwaway)
    first = batches(dataset, 8)
    assert batches(dataset, 8) == first
    assert batches(dataset.skip(3), 5) == first[3:]
    passes = [sorted(first[i] + first[i + 1]) for i in range(0, 8, 2)]
    assert all(values == list(range(10)) for values in passes)  # each pass holds every example once
    assert len({tuple(first[i] + first[i + 1]) for i in range(0, 8, 2)}) == 4  # in four orders


def test_another_seed_gives_another_order_and_no_seed_one_per_iteration():
    def order(seed):
        return np.concatenate(batches(shuffled_repeats(tf.data.Dataset.range(10), 100, seed).batch(10), 2)).tolist()

    assert order(3) == order(3) and order(3) != order(4)
    unseeded = shuffled_repeats(tf.data.Dataset.range(100), 100).batch(100)
    assert batches(unseeded, 1) != batches(unseeded, 1)


def test_the_order_is_the_same_whatever_the_global_seed():
    def order():
        return batches(shuffled_repeats(tf.data.Dataset.range(10), 100, seed=3).batch(10), 2)

    unset = order()
    try:
        for global_seed in (0, 1, 12345):  # 0 once made TensorFlow fail to build the passes
            tf.random.set_seed(global_seed)
            assert order() == unset
    finally:
        tf.random.set_seed(None)
