"""albert-tf: ALBERT (Lan et al. 2019) in TensorFlow 2 / Keras 3, faithful to google-research/albert."""

from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertClassifier, AlbertModel, AlbertPretrainingModel

__all__ = ["AlbertConfig", "AlbertModel", "AlbertPretrainingModel", "AlbertClassifier"]
