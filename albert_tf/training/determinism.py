"""Runs that repeat bit for bit (`--deterministic`): what it takes beyond seeds, and why.

- Op determinism (`tf.config.experimental.enable_op_determinism`): ops with a nondeterministic
  kernel (GPU reductions, scatter, segment sums) take a deterministic one or raise; every
  tf.data `deterministic` argument becomes True and an input function with stateful ops (the
  id checks' asserts) runs serially.
- One inter-op thread: ops of the training step then run one after another in a fixed order
  (intra-op threads stay: they split each op's work the same way every time).
- The Python, NumPy and TensorFlow seeds (`keras.utils.set_random_seed`).

The rest holds without the flag: the data order is seeded, and a checkpoint holds the input
position (pretraining's `data_steps`, fine-tuning's optimizer step) and the dropout seed
generators (`dropout_seed_states`), so a resumed run draws the batches and masks an
uninterrupted one would. The cost on CPU: docs/pretraining.md.
"""

import keras
import tensorflow as tf


def make_deterministic(seed):
    """Call before TensorFlow runs anything (thread settings are fixed at the first op)."""
    try:
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError as error:
        raise RuntimeError("make_deterministic must be called before TensorFlow runs any op") from error
    tf.config.experimental.enable_op_determinism()
    keras.utils.set_random_seed(seed)


def dropout_seed_states(model):
    """The state variables of the model's dropout seed generators, in a stable order. Keras keeps
    them out of the model's checkpoint; without them a resumed run would draw the dropout masks
    of step 0 again."""
    return [variable for variable in model.non_trainable_variables if variable.name == "seed_generator_state"]
