"""SIGTERM (preemption) turns into a request to save and stop at the next loop boundary.

Not `tf.distribute.experimental.PreemptionCheckpointHandler`: it needs a cluster resolver
(multi-worker or TPU) and its own checkpoint and step, while this works on every strategy,
including one device, and saves through the run's `CheckpointManager` with the input position.
"""

import tensorflow as tf

from albert_tf.training.distribute import num_workers


class StopRequest:
    """Set by SIGTERM (`handle`); the training loop checks it between `iterations_per_loop` blocks.

    Under multi-worker training only some workers may get the signal, but saving is collective:
    `requested(strategy)` sums the flag over workers so that all of them stop at the same step.
    """

    def __init__(self):
        self.signal_name = None

    def handle(self, signum, frame):
        """The SIGTERM handler while the loop runs (`sigterm.on_sigterm(stop.handle)`)."""
        del signum, frame
        self.signal_name = "SIGTERM"

    def requested(self, strategy):
        local = self.signal_name is not None
        if num_workers(strategy) > 1:
            votes = strategy.run(lambda: tf.constant(1.0 if local else 0.0))
            return float(strategy.reduce(tf.distribute.ReduceOp.SUM, votes, axis=None)) > 0
        return local
