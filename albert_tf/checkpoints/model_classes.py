"""The model classes this package builds (to read a `.weights.h5` file) or names (Hugging Face's
architectures), by kind. `albert_tf.models` imports this package (`from_pretrained`) and hands its
classes over here (`provide`) as it is imported; this package never imports the models.
"""

BACKBONE = "backbone"
PRETRAINING = "pretraining"
CLASSIFIER = "classifier"
KINDS = (BACKBONE, PRETRAINING, CLASSIFIER)

_classes = {}


def provide(**classes):
    """Called once by `albert_tf.models`: `backbone=`, `pretraining=`, `classifier=` its classes."""
    if set(classes) != set(KINDS):
        raise TypeError(f"provide: expected the classes of {list(KINDS)}, got {sorted(classes)}")
    _classes.update(classes)


def model_class(kind):
    """The class of `kind` (one of `KINDS`)."""
    return _classes[kind]


def kind_of(model):
    """The kind whose class `model` is exactly (a subclass is a model of its own), or None."""
    return next((kind for kind, cls in _classes.items() if type(model) is cls), None)
