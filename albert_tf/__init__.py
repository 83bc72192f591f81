"""albert-tf: ALBERT (Lan et al. 2019) in TensorFlow 2 / Keras 3, faithful to google-research/albert.

The top-level names are imported lazily, so that light modules (`albert_tf.tokenization`, used by
the data builder's worker processes) do not pay for importing TensorFlow. Importing the package
sets TensorFlow's CPU defaults (below), so import it before TensorFlow.
"""

import importlib
import os

# TensorFlow turns its oneDNN CPU kernels on by default only on CPUs with AVX-512 VNNI/BF16 or AMX.
# On AVX2-only CPUs they still make this model's matmuls 1.3-1.6x faster and its training step
# 1.16x (docs/benchmarks.md), so albert-tf asks for them unless the user chose. TF reads the
# variable once, when it is first imported: import albert_tf before tensorflow or keras.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

_EXPORTS = {
    "AlbertConfig": "albert_tf.config",
    "AlbertModel": "albert_tf.models",
    "AlbertPretrainingModel": "albert_tf.models",
    "AlbertClassifier": "albert_tf.models",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'albert_tf' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


def __dir__():
    return __all__
