"""Pretraining with the masked-LM loss alone: the "None" row of the paper's Table 5.

`MlmOnlyTrainer` is the library's trainer with the sentence-pair loss cut out of the gradient
(its logits leave the tape through `tf.stop_gradient`), so no weight learns from the sentence
labels. The sentence head and the pooler, which only that loss reaches, are frozen, so no update
(LAMB's weight decay included) moves them: held-out NSP / SOP accuracy measures the untrained head.
"""

import tensorflow as tf

from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.pretraining.losses import pretraining_losses
from albert_tf.pretraining.trainer import PretrainingTrainer

MODEL_INPUTS = INPUT_NAMES + ("masked_lm_positions",)


class MlmOnlyTrainer(PretrainingTrainer):
    """`PretrainingTrainer` whose gradient is the MLM loss's alone; metrics still report both."""

    def __init__(self, strategy, albert_config, settings):
        super().__init__(strategy, albert_config, settings)
        # Out of `trainable_variables` before the step functions are traced.
        self.model.sentence_order_head.trainable = False
        self.model.albert.pooler.trainable = False

    def _gradients_fn(self, features, weight_total):
        with tf.GradientTape() as tape:
            outputs = dict(self.model({name: features[name] for name in MODEL_INPUTS}, training=True))
            outputs["sop_logits"] = tf.stop_gradient(outputs["sop_logits"])
            losses = pretraining_losses(outputs, features, weight_total, self.settings.train_batch_size)
            loss = losses.loss if self.loss_scale is None else self.loss_scale.scale_loss(losses.loss)
        gradients = tape.gradient(loss, self.model.trainable_variables)
        return [tf.convert_to_tensor(gradient) for gradient in gradients], losses
