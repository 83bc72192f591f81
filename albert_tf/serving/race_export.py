"""A fine-tuned RACE model as a SavedModel that picks one of four options from raw text.

Signatures:
    `serving_default`: `article`, `question` string [batch], `options` string [batch, 4]
        -> `logits`, `probabilities` float32 [batch, 4] (softmax over the options) and `choice`
        int32 [batch] (the index of the chosen option, 0-3 for A-D). An empty batch gets empty outputs.
    `serve_token_ids`: `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, 4, seq], all of
        one shape -> the same outputs, for clients that build the rows themselves.
A request holds at most `max_batch_size` questions (4 model rows each), a string at most
`max_string_bytes` bytes (`request_checks`); past them it is an InvalidArgument error.

The rows are built in the graph by the task's `MultipleChoicePreprocessor`, with the ids of
`race.features.choice_rows`: the option fills the question's "_" blanks (else follows it after a
space), that text keeps its last `max_qa_length` pieces, the article its first pieces that fit,
`[CLS] article [SEP] question+option [SEP]`. Each batch is padded to its longest row. The kernel set is recorded as in the classifier export.
"""

import tensorflow as tf

from albert_tf.choices import MAX_RACE_QUESTIONS, MAX_STRING_BYTES
from albert_tf.preprocessors.multiple_choice_preprocessor import MultipleChoicePreprocessor
from albert_tf.race.examples import NUM_CHOICES
from albert_tf.serving.export_module import ExportModule
from albert_tf.serving.versioned_dir import save_versioned


class RaceServingModule(ExportModule):
    """Wraps an `AlbertMultipleChoice` with its `MultipleChoicePreprocessor` and named outputs."""

    token_shape = (None, NUM_CHOICES, None)

    def __init__(self, model, spm_model_file, do_lower_case=True, max_seq_length=512, max_qa_length=128,
                 kernels="reference", max_batch_size=MAX_RACE_QUESTIONS, max_string_bytes=MAX_STRING_BYTES):
        super().__init__(model, kernels, max_batch_size=max_batch_size, max_string_bytes=max_string_bytes)
        self.preprocessor = MultipleChoicePreprocessor(spm_model_file, sequence_length=max_seq_length,
                                                       max_qa_length=max_qa_length, do_lower_case=do_lower_case,
                                                       padding="dynamic")

    def text_specs(self):
        return [tf.TensorSpec([None], tf.string, name="article"), tf.TensorSpec([None], tf.string, name="question"),
                tf.TensorSpec([None, NUM_CHOICES], tf.string, name="options")]

    def _serve_text(self, article, question, options):
        texts = self.checked_text({"article": article, "question": question, "options": options})
        inputs = self.preprocessor((texts["article"], texts["question"], texts["options"]))
        return self.named_outputs(self.model_outputs(inputs))

    def named_outputs(self, outputs):
        return {"logits": outputs, "probabilities": tf.nn.softmax(outputs, axis=-1),
                "choice": tf.argmax(outputs, axis=-1, output_type=tf.int32)}


def export_race(model, spm_model_file, export_dir, do_lower_case=True, max_seq_length=512, max_qa_length=128,
                version=None, kernels="reference", max_batch_size=MAX_RACE_QUESTIONS,
                max_string_bytes=MAX_STRING_BYTES):
    """Writes `<export_dir>/<version>/` for an `AlbertMultipleChoice` (traced in float32, whatever its
    own dtype policy), serving requests of at most `max_batch_size` questions and `max_string_bytes`
    bytes per string; returns that path."""
    module = RaceServingModule(model, spm_model_file, do_lower_case=do_lower_case, max_seq_length=max_seq_length,
                               max_qa_length=max_qa_length, kernels=kernels, max_batch_size=max_batch_size,
                               max_string_bytes=max_string_bytes)
    return save_versioned(module, export_dir, signatures=module.signatures(), version=version)
