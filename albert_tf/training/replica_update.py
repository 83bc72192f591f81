"""Applying one step's gradients under a `tf.distribute` strategy: TensorFlow's plumbing around
the backend-agnostic optimizers of `optimization.py` (which hold the maths)."""

import tensorflow as tf


def apply_gradients_across_replicas(optimizer, gradients, variables, clip_norm=1.0, skip_non_finite=False):
    """Sums `gradients` over replicas, clips them by global norm, applies them; returns the norm.

    Call it in replica context (inside `strategy.run`, or with no strategy at all). Each replica
    passes the gradient of its share of the global loss (a loss already divided by the GLOBAL
    batch), so the sum is the exact gradient of the global batch and the clipping sees the same
    norm as on one device. `optimizer.apply` cannot be used here: it would clip before summing
    and then sum a second time; so the optimizer's `update_step` is run per variable through
    `merge_call` + `extended.update`, the same path Keras takes, after one reduction.
    The optimizer must be built (`optimizer.build(variables)`) in the strategy's scope first.

    With `skip_non_finite`, a step whose gradients hold NaN or inf changes nothing (weights,
    slots and step stay), as loss scaling needs and so that a diverging run keeps good weights.
    """
    context = tf.distribute.get_replica_context()
    # Sparse gradients (embedding lookups) are made dense, as the original's optimizers did.
    gradients = [tf.convert_to_tensor(gradient) for gradient in gradients]
    gradients = context.all_reduce(tf.distribute.ReduceOp.SUM, gradients)
    global_norm = tf.linalg.global_norm(gradients)
    if clip_norm:
        gradients, _ = tf.clip_by_global_norm(gradients, clip_norm, use_norm=global_norm)

    def update_in_cross_replica_context(strategy, reduced_gradients, finite):
        def update():
            learning_rate = optimizer.learning_rate
            for gradient, variable in zip(reduced_gradients, variables):
                strategy.extended.update(
                    getattr(variable, "value", variable),
                    lambda local_variable, local_gradient: optimizer.update_step(
                        local_gradient, local_variable, learning_rate
                    ),
                    args=(gradient,),
                    group=False,
                )
            optimizer.iterations.assign_add(1)

        if not skip_non_finite:
            update()
            return
        # The same on every replica (it comes from the summed gradients): take the first.
        tf.cond(strategy.experimental_local_results(finite)[0], update, lambda: None)

    context.merge_call(update_in_cross_replica_context, args=(gradients, tf.math.is_finite(global_norm)))
    return global_norm
