"""Our model classes by kind, found in Keras' registry under the names they are registered with
(`albert_tf>AlbertModel`, ...: the names a `.keras` file gives them), so that this package never
imports `albert_tf.models`, which imports it (`from_pretrained`). Every model exists only once that
package is imported, so wherever a model is read or written its classes are registered."""

import keras

BACKBONE = "backbone"
PRETRAINING = "pretraining"
CLASSIFIER = "classifier"
QUESTION_ANSWERING = "question_answering"
MULTIPLE_CHOICE = "multiple_choice"
_REGISTERED_NAMES = {
    BACKBONE: "albert_tf>AlbertModel",
    PRETRAINING: "albert_tf>AlbertPretrainingModel",
    CLASSIFIER: "albert_tf>AlbertClassifier",
    QUESTION_ANSWERING: "albert_tf>AlbertQuestionAnswering",
    MULTIPLE_CHOICE: "albert_tf>AlbertMultipleChoice",
}
KINDS = tuple(_REGISTERED_NAMES)


def model_class(kind):
    """The class of `kind` (one of `KINDS`)."""
    return keras.saving.get_registered_object(_REGISTERED_NAMES[kind])


def kind_of(model):
    """The kind whose class `model` is exactly (a subclass is a model of its own), or None."""
    return next((kind for kind in KINDS if type(model) is model_class(kind)), None)
