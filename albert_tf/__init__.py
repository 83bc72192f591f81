"""albert-tf: ALBERT (Lan et al. 2019) in TensorFlow 2 / Keras 3, faithful to google-research/albert.

The top-level names are imported lazily, so that light modules (`albert_tf.text.tokenization`, used by
the data builder's worker processes) do not pay for importing TensorFlow. Importing the package
changes no environment variable (the scripts' `albert_cli.cli.prefer_onednn` does, see there).
"""

from albert_tf.lazy_names import lazy_names

_EXPORTS = {
    "AlbertConfig": "albert_tf.config",
    "AlbertModel": "albert_tf.models",
    "AlbertPretrainingModel": "albert_tf.models",
    "AlbertClassifier": "albert_tf.models",
    "AlbertMultipleChoice": "albert_tf.models",
    "AlbertQuestionAnswering": "albert_tf.models",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
