"""`AlbertQuestionAnswering`: the backbone with the original's SQuAD v1.1 or v2.0 head, and its loss."""

import keras
from keras import ops

from albert_tf.choices import END_N_TOP, START_N_TOP
from albert_tf.models.albert_model import INPUT_NAMES, text_inputs
from albert_tf.layers.question_answering_heads import ANSWER_DROPOUT, AnswerabilitySpanHead, SpanLogitsHead
from albert_tf.models.serialization import RebuiltFromAlbertConfig
from albert_tf.models.task_backbone import backbone_for

START_POSITIONS = "start_positions"


def _cross_entropy(logits, positions):
    return ops.mean(keras.losses.sparse_categorical_crossentropy(positions, logits, from_logits=True))


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertQuestionAnswering(RebuiltFromAlbertConfig, keras.Model):
    """Span extraction for SQuAD: inputs are the backbone's three plus `p_mask` (1 where no
    answer may be) and, to train v2.0, the gold `start_positions` [B] (may be left out).

    v1.1 (`version_2_with_negative=False`) outputs `start_logits`, `end_logits` [B, L]; v2.0
    outputs those of `AnswerabilitySpanHead`. `compute_loss` is the original's: the mean of the
    start and end cross-entropies, plus (v2.0) half the answerability sigmoid cross-entropy;
    `fit` targets are a dict with `start_positions`, `end_positions`, `is_impossible`.

    A functional model over the backbone, as the other task models: its graph gives the outputs
    at inference (predictions, exports) and v1.1's in training. The v2.0 head gives other outputs
    in training (log-probabilities, the ends given the gold start) than at inference (the beam),
    and a functional graph has one output structure, so in training v2.0 calls the same layers
    directly (`call`).
    """

    def __init__(self, config=None, version_2_with_negative=False, start_n_top=START_N_TOP, end_n_top=END_N_TOP,
                 dropout_rate=ANSWER_DROPOUT, dtype=None, kernels="reference", backbone=None, **kwargs):
        # === Layers ===
        self.albert = backbone_for(config, dtype, kernels, backbone)
        # The heads read `sequence_output` only: the pooler stays in the weights and checkpoints
        # but gets no gradient, so it is not trained (nor was it in the original).
        self.albert.pooler.trainable = False
        config = self.albert.config
        if version_2_with_negative:
            self.qa_head = AnswerabilitySpanHead(
                config.hidden_size, start_n_top=start_n_top, end_n_top=end_n_top, dropout_rate=dropout_rate,
                initializer_range=config.initializer_range, name="answerability_span_head")
        else:
            self.qa_head = SpanLogitsHead(config.hidden_size, initializer_range=config.initializer_range,
                                          name="span_logits_head")

        # === Functional model ===
        inputs = {**text_inputs(), "p_mask": keras.Input(shape=(None,), dtype="int32", name="p_mask"),
                  START_POSITIONS: keras.Input(shape=(), dtype="int32", name=START_POSITIONS)}
        sequence_output = self.albert({name: inputs[name] for name in INPUT_NAMES})["sequence_output"]
        if version_2_with_negative:
            outputs = self.qa_head(sequence_output, inputs["p_mask"], inputs[START_POSITIONS])
        else:
            outputs = self.qa_head(sequence_output)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.config = config
        self.version_2_with_negative = version_2_with_negative
        self.start_n_top = start_n_top
        self.end_n_top = end_n_top
        self.dropout_rate = dropout_rate
        self.dtype_policy_name = self.albert.dtype_policy_name
        self.kernels = self.albert.kernels

    def __call__(self, inputs, *args, **kwargs):
        # Without `start_positions` (inference, serving): zeros [B] of the ids' own type, which only
        # the v2.0 training outputs read (Keras wants every named input given, all of one kind).
        if isinstance(inputs, dict) and START_POSITIONS not in inputs:
            inputs = {**inputs, START_POSITIONS: inputs["input_word_ids"][:, 0] * 0}
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, training=False, **kwargs):
        if training and self.version_2_with_negative:  # the training outputs: the same layers, in training
            sequence_output = self.albert({name: inputs[name] for name in INPUT_NAMES}, training=True)["sequence_output"]
            return self.qa_head(sequence_output, inputs["p_mask"], inputs[START_POSITIONS], training=True)
        return super().call(inputs, training=training, **kwargs)

    def example_inputs(self, batch_size=1):
        """Zero inputs of every name the model reads, long enough for the v2.0 beam."""
        length = max(8, self.start_n_top, self.end_n_top)
        inputs = {name: ops.zeros((batch_size, length), "int32") for name in INPUT_NAMES + ("p_mask",)}
        inputs[START_POSITIONS] = ops.zeros((batch_size,), "int32")
        return inputs

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if self.version_2_with_negative:
            span_loss = (_cross_entropy(y_pred["start_log_probs"], y["start_positions"])
                         + _cross_entropy(y_pred["end_log_probs"], y["end_positions"])) / 2
            answerability = ops.binary_crossentropy(ops.cast(y["is_impossible"], "float32"), y_pred["cls_logits"],
                                                    from_logits=True)
            return span_loss + 0.5 * ops.mean(answerability)
        return (_cross_entropy(y_pred["start_logits"], y["start_positions"])
                + _cross_entropy(y_pred["end_logits"], y["end_positions"])) / 2

    def extra_config(self):
        return {"version_2_with_negative": self.version_2_with_negative, "start_n_top": self.start_n_top,
                "end_n_top": self.end_n_top, "dropout_rate": self.dropout_rate}
