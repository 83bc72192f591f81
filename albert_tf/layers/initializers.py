"""Weight initialisation as in the original: truncated normal (2 stddev cut-off) for every matrix."""

import keras


def truncated_normal(stddev):
    return keras.initializers.TruncatedNormal(stddev=stddev)
