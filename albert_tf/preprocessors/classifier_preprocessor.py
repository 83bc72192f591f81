"""`ClassifierPreprocessor`: raw text of one or two segments -> `AlbertClassifier`'s inputs, in graph."""

import keras

from albert_tf.preprocessors.text_preprocessor import TextPreprocessor
from albert_tf.text.preprocessing import AlbertInputPacker


@keras.saving.register_keras_serializable(package="albert_tf")
class ClassifierPreprocessor(TextPreprocessor):
    """Strings -> `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, length], the ids of
    `glue.features.example_ids` (`[CLS] A [SEP] (B [SEP])`, pairs truncated longest first).

    `x` is one segment (a string, a list or a [batch] tensor of strings) or a tuple of two (pair
    tasks); the call convention is `TextPreprocessor`'s. `padding="fixed"` pads to
    `sequence_length`, "dynamic" only to the batch's longest row (at most `sequence_length`), as the
    raw-text SavedModel does.
    """

    def __init__(self, spm_model_file, sequence_length=512, do_lower_case=True, padding="fixed", **kwargs):
        super().__init__(spm_model_file, sequence_length, do_lower_case, padding, **kwargs)
        fixed = padding == "fixed"
        self.packer = AlbertInputPacker(
            sequence_length if fixed else None, cls_id=self.tokenizer.cls_id, sep_id=self.tokenizer.sep_id,
            pad_id=self.tokenizer.pad_id, max_seq_length=None if fixed else sequence_length)

    def model_inputs(self, texts):
        return self.packer([self.tokenizer(segment) for segment in texts])
