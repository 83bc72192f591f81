"""One preprocessor per task, for training, prediction and every export: raw text -> the model's inputs.

`ClassifierPreprocessor` (one or two segments) and `MultipleChoicePreprocessor` (RACE) are Keras
layers over the in-graph tokenizer; `SquadWindowing` holds SQuAD's window rules, which the feature
files and the export's graph both follow (answer alignment keeps SQuAD's training side in Python).
`packing` is the rule they all share, written once. The names are imported lazily, so that the
data builder's worker processes can use `packing` without importing TensorFlow.
"""

from albert_tf.lazy_names import lazy_names

_EXPORTS = {
    "ClassifierPreprocessor": "albert_tf.preprocessors.classifier_preprocessor",
    "MultipleChoicePreprocessor": "albert_tf.preprocessors.multiple_choice_preprocessor",
    "SquadWindowing": "albert_tf.preprocessors.squad_windowing",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
