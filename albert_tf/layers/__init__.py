"""ALBERT's Keras layers, one role per module: the model's math, in `keras.ops` (any Keras backend)."""

from albert_tf.layers.attention import AttentionSubLayer
from albert_tf.layers.attention_mask import attention_bias
from albert_tf.layers.classification_head import ClassificationHead
from albert_tf.layers.factorized_embedding import FactorizedEmbedding
from albert_tf.layers.feed_forward import FeedForwardSubLayer
from albert_tf.layers.masked_lm_head import MaskedLMHead
from albert_tf.layers.question_answering_heads import AnswerabilitySpanHead, SpanLogitsHead
from albert_tf.layers.sentence_order_head import SentenceOrderHead
from albert_tf.layers.shared_encoder import SharedTransformerEncoder
