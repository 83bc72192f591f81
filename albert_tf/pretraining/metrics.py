"""The original's four pretraining metrics, accumulated across replicas and steps."""

import keras

METRIC_NAMES = ("masked_lm_accuracy", "masked_lm_loss", "sentence_order_accuracy", "sentence_order_loss")


class PretrainingMetrics:
    """Weighted means over everything seen since the last `reset()`, summed over replicas.

    MLM metrics are weighted by `masked_lm_weights` (padding positions count for nothing), as
    the original's `tf.metrics.mean(..., weights=masked_lm_weights)`. Build it in
    `strategy.scope()`: Keras metric variables are sum-on-read, so `result()` in cross-replica
    context covers every replica.
    """

    def __init__(self):
        self._means = {name: keras.metrics.Mean(name=name) for name in METRIC_NAMES}

    def update(self, losses, features):
        mlm_weights = features["masked_lm_weights"]
        self._means["masked_lm_accuracy"].update_state(losses.masked_lm_correct, sample_weight=mlm_weights)
        self._means["masked_lm_loss"].update_state(losses.masked_lm_losses, sample_weight=mlm_weights)
        self._means["sentence_order_accuracy"].update_state(losses.sentence_order_correct)
        self._means["sentence_order_loss"].update_state(losses.sentence_order_losses)

    def result(self):
        """Plain floats; `loss` is MLM + SOP as in the original's eval results."""
        values = {name: float(mean.result()) for name, mean in self._means.items()}
        values["loss"] = values["masked_lm_loss"] + values["sentence_order_loss"]
        return values

    def reset(self):
        for mean in self._means.values():
            mean.reset_state()
