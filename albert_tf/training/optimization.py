"""ALBERT's optimizers and learning-rate schedule, with the original's exact formulas.

The original (`optimization.py`, `lamb_optimizer.py`) differs from Keras' `Lamb` and `AdamW` in
ways that matter for reproducing its runs: Adam moments WITHOUT bias correction, weight decay
added to the update (before LAMB's trust ratio, not applied to the weights separately), no decay
and no layer adaptation for LayerNorm and bias variables, gradients clipped to global norm 1.0,
and a warmup that overrides (rather than precedes) the polynomial decay. Keras supplies the
plumbing (slot variables, step counter, schedules, checkpointing); this module adds the maths,
in `keras.ops` only, so that the same optimizers train on TensorFlow, JAX and PyTorch.

Public API:
    `WarmupPolynomialDecay`  the learning-rate schedule (section 6.2 of the reference).
    `AdamWeightDecay`, `Lamb`  Keras optimizers; slots are named `<variable path>_adam_m/_adam_v`.
    `create_optimizer(...)`  the original's `create_optimizer` as a Keras optimizer.

Clipping by global norm: Keras' `global_clipnorm=1.0` (every backend), or, in a `tf.distribute`
loop, `albert_tf.training.replica_update.apply_gradients_across_replicas`.
"""

import re

import keras
from keras import ops

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
        step = ops.cast(step, "float32")
        decayed = ops.cast(self._decay(step), "float32")
        if not self.warmup_steps:
            return decayed
        steps_into_warmup = step - float(self.start_warmup_step)
        warmup = self.initial_learning_rate * ops.maximum(steps_into_warmup, 0.0) / float(self.warmup_steps)
        return ops.where(steps_into_warmup < float(self.warmup_steps), warmup, decayed)

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
    Gradient clipping is not done here: the original clips by GLOBAL norm across all gradients
    (see the module's docstring).
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
        gradient = ops.cast(gradient, variable.dtype)
        learning_rate = ops.cast(learning_rate, variable.dtype)

        next_momentum = self.beta_1 * ops.convert_to_tensor(momentum) + (1.0 - self.beta_1) * gradient
        next_velocity = self.beta_2 * ops.convert_to_tensor(velocity) + (1.0 - self.beta_2) * ops.square(gradient)
        self.assign(momentum, next_momentum)
        self.assign(velocity, next_velocity)

        update = next_momentum / (ops.sqrt(next_velocity) + self.epsilon)
        if self._decays[index]:
            update += self.weight_decay_rate * ops.convert_to_tensor(variable)
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
        weight_norm = _l2_norm(ops.convert_to_tensor(variable))
        update_norm = _l2_norm(update)
        both_positive = ops.logical_and(weight_norm > 0.0, update_norm > 0.0)
        return ops.where(both_positive, weight_norm / ops.where(both_positive, update_norm, 1.0), 1.0)


def _l2_norm(tensor):
    """The norm over every element whatever the rank, as the original's `tf.norm`."""
    return ops.sqrt(ops.sum(ops.square(tensor)))


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

    Clip gradients with `replica_update.apply_gradients_across_replicas` in a `tf.distribute`
    loop; under `model.fit` (or `optimizer.apply`),
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



def fine_tuning_optimizer(name, learning_rate, train_steps, warmup_steps, mixed_precision=None):
    """The original's fine-tuning optimizer, for every task: weight decay 0.01, global-norm clip 1.0,
    linear decay; `mixed_precision="mixed_float16"` adds dynamic loss scaling."""
    optimizer = create_optimizer(name, learning_rate, num_train_steps=train_steps, num_warmup_steps=warmup_steps,
                                 global_clipnorm=1.0)
    if mixed_precision == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer
