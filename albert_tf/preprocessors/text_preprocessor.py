"""`TextPreprocessor`: what every task's preprocessor shares, keras-hub's call convention on the
in-graph tokenizer."""

import keras
import tensorflow as tf

from albert_tf.text.preprocessing import AlbertTextTokenizer

# What a preprocessor pads to: every row to `sequence_length`, or a batch to its longest row.
PREPROCESSOR_PADDING = ("fixed", "dynamic")


class TextPreprocessor(keras.layers.Layer):
    """Raw text -> a task model's inputs, called as keras-hub's preprocessors are:
    `preprocessor(x, y=None, sample_weight=None)`, where `x` is one string input or a tuple of them;
    `y` and `sample_weight` pass through, so `dataset.map(preprocessor)` feeds `fit` raw text.
    Batched strings give batched inputs; scalars (one row, for an unbatched `tf.data` map) inputs
    without the batch axis. A subclass builds the inputs (`model_inputs`). TensorFlow ops on every
    Keras backend, as `tf.data` runs them.
    """

    def __init__(self, spm_model_file, sequence_length, do_lower_case, padding, **kwargs):
        super().__init__(**kwargs)
        # Strings in, TensorFlow tensors out on every backend: keep Keras from converting them.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if padding not in PREPROCESSOR_PADDING:
            raise ValueError(f"padding must be one of {PREPROCESSOR_PADDING}, got {padding!r}")
        self.tokenizer = AlbertTextTokenizer(spm_model_file, do_lower_case=do_lower_case)
        self.spm_model_file = spm_model_file
        self.sequence_length = sequence_length
        self.do_lower_case = bool(do_lower_case)
        self.padding = padding
        self.built = True

    def call(self, x, y=None, sample_weight=None):
        texts = [tf.convert_to_tensor(text, tf.string) for text in (x if isinstance(x, tuple) else (x,))]
        single = texts[0].shape.rank == 0
        inputs = self.model_inputs([text[tf.newaxis] for text in texts] if single else texts)
        if single:
            inputs = {name: value[0] for name, value in inputs.items()}
        return keras.utils.pack_x_y_sample_weight(inputs, y, sample_weight)

    def model_inputs(self, texts):
        """{input name: int32 tensor [batch, ...]} of the string tensors `texts`, each with a batch axis."""
        raise NotImplementedError

    def get_config(self):
        config = super().get_config()
        config.update({"spm_model_file": self.spm_model_file, "sequence_length": self.sequence_length,
                       "do_lower_case": self.do_lower_case, "padding": self.padding})
        return config
