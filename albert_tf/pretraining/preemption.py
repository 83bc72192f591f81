"""SIGTERM (preemption) turns into a request to save and stop at the next loop boundary.

Not `tf.distribute.experimental.PreemptionCheckpointHandler`: it needs a cluster resolver
(multi-worker or TPU) and its own checkpoint and step, while this works on every strategy,
including one device, and saves through the run's `CheckpointManager` with the input position.
"""

import signal

import tensorflow as tf

from albert_tf.training.distribute import num_workers


class StopRequest:
    """Set by SIGTERM; the training loop checks it between `iterations_per_loop` blocks.

    Under multi-worker training only some workers may get the signal, but saving is collective:
    `requested(strategy)` sums the flag over workers so that all of them stop at the same step.
    """

    def __init__(self, signals=(signal.SIGTERM,)):
        self.signal_name = None
        self._previous = {signum: signal.signal(signum, self._handle) for signum in signals}

    def release(self):
        """Gives the signals back to their previous handlers (the loop no longer checks the flag)."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum, frame):
        del frame
        self.signal_name = signal.Signals(signum).name

    def requested(self, strategy):
        local = self.signal_name is not None
        if num_workers(strategy) > 1:
            votes = strategy.run(lambda: tf.constant(1.0 if local else 0.0))
            return float(strategy.reduce(tf.distribute.ReduceOp.SUM, votes, axis=None)) > 0
        return local
