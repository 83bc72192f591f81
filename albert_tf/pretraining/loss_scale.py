"""Dynamic loss scaling for `--mixed_precision=mixed_float16` in a custom loop.

Keras' `LossScaleOptimizer` unscales inside `apply`, after the point where our loop clips by the
global norm of the summed gradients; so the scale lives here and the loop unscales first.
"""

import tensorflow as tf


class DynamicLossScale:
    """Multiplies the loss by `scale`; halves it after a non-finite step, doubles it after
    `growth_interval` finite ones (Keras' and TF's defaults). Build it in `strategy.scope()`;
    its variables are checkpointed with the run."""

    def __init__(self, initial_scale=2.0**15, growth_interval=2000):
        self.growth_interval = growth_interval
        aggregation = tf.VariableAggregation.ONLY_FIRST_REPLICA
        self.scale = tf.Variable(
            initial_scale, trainable=False, dtype=tf.float32, aggregation=aggregation, name="loss_scale"
        )
        self.finite_steps = tf.Variable(
            0, trainable=False, dtype=tf.int64, aggregation=aggregation, name="finite_steps"
        )

    def scale_loss(self, loss):
        return loss * self.scale

    def unscale(self, gradients):
        inverse = 1.0 / self.scale
        return [gradient * inverse for gradient in gradients]

    def update(self, finite):
        """Call once per step in replica context with the same `finite` on every replica."""
        grow = tf.logical_and(finite, self.finite_steps + 1 >= self.growth_interval)
        kept_or_grown = tf.where(grow, self.scale * 2.0, self.scale)
        self.scale.assign(tf.where(finite, kept_or_grown, tf.maximum(self.scale / 2.0, 1.0)))
        counting = tf.logical_and(finite, tf.logical_not(grow))
        self.finite_steps.assign(tf.where(counting, self.finite_steps + 1, tf.zeros_like(self.finite_steps)))

    def checkpoint_items(self):
        return {"loss_scale": self.scale, "loss_scale_finite_steps": self.finite_steps}
