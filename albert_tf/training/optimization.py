"""ALBERT's optimizers and learning-rate schedule, with the original's exact formulas.

The original (`optimization.py`, `lamb_optimizer.py`) differs from Keras' `Lamb` and `AdamW` in
ways that matter for reproducing its runs: Adam moments WITHOUT bias correction, weight decay
added to the update (before LAMB's trust ratio, not applied to the weights separately), no decay
and no layer adaptation for LayerNorm and bias variables, gradients clipped to global norm 1.0,
and a warmup that overrides (rather than precedes) the polynomial decay. Keras supplies the
plumbing (slot variables, step counter, schedules, checkpointing); this module adds the maths.

Public API:
    `WarmupPolynomialDecay`  the learning-rate schedule (section 6.2 of the reference).
    `AdamWeightDecay`, `Lamb`  Keras optimizers; slots are named `<variable path>_adam_m/_adam_v`.
    `create_optimizer(...)`  the original's `create_optimizer` as a Keras optimizer.
    `apply_gradients_across_replicas(...)`  sum over replicas, clip by global norm, apply; for
        custom loops under any `tf.distribute` strategy (or none).
"""

import re

import keras
import tensorflow as tf

from albert_tf.choices import OPTIMIZER_NAMES

# The original matches these with `re.search` on variable names. On our paths they catch every
# LayerNorm (`.../layer_norm/gamma`, `masked_lm_head/transform_layer_norm/beta`) and every bias,
# including `masked_lm_head/output_bias` and `sentence_order_head/output_bias`.
EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")


@keras.saving.register_keras_serializable(package="albert_tf")
class WarmupPolynomialDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Polynomial decay from `initial_learning_rate` to `end_learning_rate` over `decay_steps`,
    overridden during warmup by `initial_learning_rate * (step - start_warmup_step) / warmup_steps`.

    As in the original, the decay runs on the global step from 0 (warmup steps count towards it),
    so the rate drops slightly when warmup ends: to about init * (1 - warmup/decay_steps)^power.
    One conscious change: before `start_warmup_step` the original's warmup value is negative;
    here it is 0.
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        warmup_steps=0,
        start_warmup_step=0,
        power=1.0,
        end_learning_rate=0.0,
        name="WarmupPolynomialDecay",
    ):
        super().__init__()
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.warmup_steps = warmup_steps
        self.start_warmup_step = start_warmup_step
        self.power = power
        self.end_learning_rate = end_learning_rate
        self.name = name
        self._decay = keras.optimizers.schedules.PolynomialDecay(
            initial_learning_rate, decay_steps, end_learning_rate=end_learning_rate, power=power
        )

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        decayed = tf.cast(self._decay(step), tf.float32)
        if not self.warmup_steps:
            return decayed
        steps_into_warmup = step - float(self.start_warmup_step)
        warmup = self.initial_learning_rate * tf.maximum(steps_into_warmup, 0.0) / float(self.warmup_steps)
        return tf.where(steps_into_warmup < float(self.warmup_steps), warmup, decayed)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "warmup_steps": self.warmup_steps,
            "start_warmup_step": self.start_warmup_step,
            "power": self.power,
            "end_learning_rate": self.end_learning_rate,
            "name": self.name,
        }


@keras.saving.register_keras_serializable(package="albert_tf")
class AdamWeightDecay(keras.optimizers.Optimizer):
    """The original's `AdamWeightDecayOptimizer`: Adam without bias correction, decay in the update.

    update = m / (sqrt(v) + epsilon) + weight_decay_rate * w   (decay term only for variables
    whose path matches none of `decay_exclusion_patterns`), then w -= lr * update.
    Gradient clipping is not done here: the original clips by GLOBAL norm across all gradients,
    see `apply_gradients_across_replicas`.
    """

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay_rate=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        decay_exclusion_patterns=EXCLUDE_FROM_WEIGHT_DECAY,
        name="adam_weight_decay",
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.decay_exclusion_patterns = tuple(decay_exclusion_patterns)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums = [self.add_variable_from_reference(v, "adam_m") for v in var_list]
        self._velocities = [self.add_variable_from_reference(v, "adam_v") for v in var_list]
        # Looked up by index: inside `extended.update` the variable is a per-device component
        # whose name is not the Keras path.
        self._decays = [self.uses_weight_decay(v) for v in var_list]

    def uses_weight_decay(self, variable):
        """True unless the variable's path matches an exclusion pattern (LayerNorm, bias)."""
        path = getattr(variable, "path", variable.name)
        return not any(re.search(pattern, path) for pattern in self.decay_exclusion_patterns)

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        momentum, velocity = self._momentums[index], self._velocities[index]
        gradient = tf.cast(gradient, variable.dtype)
        learning_rate = tf.cast(learning_rate, variable.dtype)

        next_momentum = self.beta_1 * momentum + (1.0 - self.beta_1) * gradient
        next_velocity = self.beta_2 * velocity + (1.0 - self.beta_2) * tf.square(gradient)
        self.assign(momentum, next_momentum)
        self.assign(velocity, next_velocity)

        update = next_momentum / (tf.sqrt(next_velocity) + self.epsilon)
        if self._decays[index]:
            update += self.weight_decay_rate * tf.convert_to_tensor(variable)
            step = self.trust_ratio(variable, update) * learning_rate * update
        else:
            step = learning_rate * update
        self.assign_sub(variable, step)

    def trust_ratio(self, variable, update):
        """Step multiplier for a decayed tensor; 1 for Adam, ||w|| / ||update|| for LAMB."""
        del variable, update
        return 1.0

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "weight_decay_rate": self.weight_decay_rate,
                "beta_1": self.beta_1,
                "beta_2": self.beta_2,
                "epsilon": self.epsilon,
                "decay_exclusion_patterns": list(self.decay_exclusion_patterns),
            }
        )
        return config


@keras.saving.register_keras_serializable(package="albert_tf")
class Lamb(AdamWeightDecay):
    """The original's `LAMBOptimizer`: `AdamWeightDecay` times a per-tensor trust ratio.

    ratio = ||w||_2 / ||update||_2 over the whole tensor, 1.0 when either norm is 0, and 1.0 for
    the variables excluded from weight decay (the original's default for layer adaptation).
    """

    def __init__(self, learning_rate=0.001, name="lamb", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)

    def trust_ratio(self, variable, update):
        weight_norm = tf.norm(tf.convert_to_tensor(variable))
        update_norm = tf.norm(update)
        both_positive = tf.logical_and(weight_norm > 0.0, update_norm > 0.0)
        return tf.where(both_positive, weight_norm / tf.where(both_positive, update_norm, 1.0), 1.0)


def create_optimizer(
    name,
    learning_rate,
    num_train_steps,
    num_warmup_steps=0,
    start_warmup_step=0,
    poly_power=1.0,
    weight_decay_rate=0.01,
    **kwargs,
):
    """The original's `create_optimizer`: "lamb" or "adamw" on `WarmupPolynomialDecay`.

    Clip gradients with `apply_gradients_across_replicas` in a custom loop; under `model.fit`,
    pass `global_clipnorm=1.0` in `kwargs` (Keras then clips each replica's gradients before
    summing them, as the original did per TPU core).
    """
    if name not in OPTIMIZER_NAMES:
        raise ValueError(f"optimizer must be one of {OPTIMIZER_NAMES}, got {name!r}")
    schedule = WarmupPolynomialDecay(
        learning_rate,
        decay_steps=num_train_steps,
        warmup_steps=num_warmup_steps,
        start_warmup_step=start_warmup_step,
        power=poly_power,
    )
    optimizer_class = Lamb if name == "lamb" else AdamWeightDecay
    return optimizer_class(learning_rate=schedule, weight_decay_rate=weight_decay_rate, **kwargs)


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
