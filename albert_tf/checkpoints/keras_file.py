"""Keras files of our models: a `.keras` file, or a `.weights.h5` file of any of our five model
kinds (told apart by its layers).

The model a `.weights.h5` file is read into is built from `model_classes` (Keras' registry: the
models import this package, not the other way round).
"""

import zipfile

import keras

from albert_tf.checkpoints.model_classes import (BACKBONE, CLASSIFIER, MULTIPLE_CHOICE, PRETRAINING, QUESTION_ANSWERING,
                                                 model_class)
from albert_tf.checkpoints.names import tf1_variables
from albert_tf.checkpoints.stored import StoredWeights


# Where a `.weights.h5` file keeps the position table: the factorized embedding's third variable.
_POSITION_TABLE_SUFFIX = "factorized_embedding/vars/2"


def read_keras_file(path, model, longer_positions=False):
    """A `.keras` file is loaded as the model it holds; a `.weights.h5` file into the model its
    layers name (pretraining, SQuAD 1.1 or 2.0, multiple choice, classifier or backbone), built from
    `model`'s config (with the file's own number of positions when `longer_positions`: the model may
    have more)."""
    if path.endswith(".keras"):
        try:
            source = keras.saving.load_model(path, compile=False)
        except (ValueError, TypeError, OSError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path} is not a loadable .keras file of an ALBERT model ({error}).") from None
    else:
        source = _model_for_weights_file(path, model.config, longer_positions)
        try:
            source.load_weights(path)
        except (ValueError, OSError) as error:
            raise ValueError(f"{path} does not fit {type(source).__name__} of this config: {error}") from None
    try:
        variables = tf1_variables(source)
    except TypeError as error:
        raise ValueError(f"{path}: {error}") from None
    return StoredWeights(
        path=path,
        format="Keras file",
        shapes={name: list(variable.shape) for name, variable in variables.items()},
        read=lambda name: variables[name].numpy(),
    )


def _model_for_weights_file(path, config, longer_positions):
    import h5py  # pylint: disable=g-import-not-at-top

    try:
        with h5py.File(path, "r") as handle:
            layers = handle.get("layers")
            names = set(layers.keys()) if layers is not None else set()
            num_labels = handle["layers/classification_head/vars/0"].shape[0] if "classification_head" in names else None
            tables = []
            handle.visititems(lambda name, item: tables.append(item.shape[0]) if name.endswith(
                _POSITION_TABLE_SUFFIX) and len(getattr(item, "shape", ())) == 2 else None)
    except OSError as error:
        raise ValueError(f"{path} is not a readable .weights.h5 file ({error}).") from None
    if longer_positions and tables and tables[0] < config.max_position_embeddings:
        config = config.replace(max_position_embeddings=int(tables[0]))
    if "masked_lm_head" in names:
        return model_class(PRETRAINING)(config)
    if names & {"span_logits_head", "answerability_span_head"}:
        # The beam holds no weights; a beam of one traces on every backend (JAX cannot decide a top-5
        # over a length it only knows to be at least 2).
        return model_class(QUESTION_ANSWERING)(config, version_2_with_negative="answerability_span_head" in names,
                                               start_n_top=1, end_n_top=1)
    if "option_rows" in names:
        return model_class(MULTIPLE_CHOICE)(config)
    if num_labels is not None:
        return model_class(CLASSIFIER)(config, num_labels)
    return model_class(BACKBONE)(config)
