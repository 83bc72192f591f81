"""The encoder alone, in the two-SavedModel layout of TF-Hub text encoders.

`<export_dir>/preprocessing/<version>/`: `__call__(strings [batch])` -> `input_word_ids`,
`input_mask`, `input_type_ids` int32 [batch, seq_length]; `tokenize(strings)` -> ragged ids;
`bert_pack_inputs([ragged, ...], seq_length=...)` for one or two segments and any of
`PACK_LENGTHS` up to the model's maximum. The SentencePiece model is an asset.
`<export_dir>/encoder/<version>/`: `__call__(dict of the three inputs)` -> `sequence_output`,
`pooled_output` (also as `default`) and the list `encoder_outputs`. Signatures (tensors only):
`serving_default` -> `sequence_output`, `pooled_output`, `default`; `serve_encoder_outputs` ->
the same and every layer's output as `encoder_outputs_<i>` (a server copies every output it
returns, so the per-layer outputs are sent only to the clients that ask). The kernel set the
graph was traced with is recorded as the string variable `export_kernels`.
The encoder's three inputs must have one shape; a request holds at most `max_batch_size` rows
and (preprocessing) `max_string_bytes` bytes per string (`request_checks`).
"""

import os

import tensorflow as tf

from albert_tf.choices import MAX_BATCH_SIZE, MAX_STRING_BYTES
from albert_tf.serving.export_module import ExportModule
from albert_tf.serving.request_checks import check_bounds, checked_text
from albert_tf.serving.versioned_dir import save_versioned_together
from albert_tf.text.preprocessing import AlbertInputPacker, AlbertTextTokenizer

# The original's lengths, then the longer ones a block-sparse config reaches (docs/long_documents.md);
# an export offers those up to its config's max_position_embeddings.
PACK_LENGTHS = (32, 64, 128, 256, 384, 512, 1024, 2048, 4096)
ENCODER_OUTPUTS_SIGNATURE = "serve_encoder_outputs"


class EncoderModule(ExportModule):
    """An `AlbertModel` behind a dict-in, dict-out `__call__` (the token-id function)."""

    SIGNATURES = {"serving_default": "serve", ENCODER_OUTPUTS_SIGNATURE: "serve_encoder_outputs"}

    def __init__(self, albert, kernels="reference", max_batch_size=MAX_BATCH_SIZE):
        super().__init__(albert, kernels, max_batch_size=max_batch_size)
        self.__call__ = self.serve_token_ids
        spec = self.token_ids_spec()
        self.serve = tf.function(self._serve, input_signature=[spec])
        self.serve_encoder_outputs = tf.function(self._serve_encoder_outputs, input_signature=[spec])

    def model_outputs(self, inputs):
        # The row read for an empty batch has a token or more: the sequences keep the request's length.
        outputs = super().model_outputs(inputs)
        length = tf.shape(inputs["input_word_ids"])[1]
        return {**outputs, "encoder_outputs": [value[:, :length] for value in outputs["encoder_outputs"]]}

    def named_outputs(self, outputs):
        pooled = outputs["pooled_output"]
        return {
            "sequence_output": outputs["encoder_outputs"][-1],
            "pooled_output": pooled,
            "default": pooled,
            "encoder_outputs": outputs["encoder_outputs"],
        }

    def _serve(self, inputs):
        return {name: value for name, value in self.serve_token_ids(inputs).items() if name != "encoder_outputs"}

    def _serve_encoder_outputs(self, inputs):
        outputs = self.serve_token_ids(inputs)
        flat = {name: value for name, value in outputs.items() if name != "encoder_outputs"}
        flat.update({f"encoder_outputs_{i}": value for i, value in enumerate(outputs["encoder_outputs"])})
        return flat


class PreprocessingModule(tf.Module):
    """Raw text -> the encoder's inputs, with ALBERT's normalisation and pair truncation."""

    def __init__(self, spm_model_file, do_lower_case=True, seq_length=128, max_seq_length=512,
                 max_batch_size=MAX_BATCH_SIZE, max_string_bytes=MAX_STRING_BYTES):
        super().__init__()
        check_bounds(max_batch_size=max_batch_size, max_string_bytes=max_string_bytes)
        self.max_batch_size, self.max_string_bytes = max_batch_size, max_string_bytes
        self.tokenizer = AlbertTextTokenizer(spm_model_file, do_lower_case=do_lower_case)
        special = dict(cls_id=self.tokenizer.cls_id, sep_id=self.tokenizer.sep_id, pad_id=self.tokenizer.pad_id)
        lengths = sorted({length for length in PACK_LENGTHS if length <= max_seq_length} | {seq_length})
        self.packers = {str(length): AlbertInputPacker(length, **special) for length in lengths}
        self.default_seq_length = seq_length
        strings = tf.TensorSpec([None], tf.string)
        self.tokenize = tf.function(self._tokenize, input_signature=[strings])
        self.__call__ = tf.function(self._preprocess, input_signature=[strings])
        self.bert_pack_inputs = tf.function(self._pack)
        ragged = tf.RaggedTensorSpec([None, None], tf.int32)
        for length in lengths:
            for count in (1, 2):
                self.bert_pack_inputs.get_concrete_function([ragged] * count, seq_length=length)

    def _tokenize(self, strings):
        return self.tokenizer(checked_text({"strings": strings}, self.max_batch_size, self.max_string_bytes)["strings"])

    def _pack(self, segments, seq_length):
        return self.packers[str(seq_length)](list(segments))

    def _preprocess(self, strings):
        return self._pack([self._tokenize(strings)], self.default_seq_length)


def export_encoder(albert, spm_model_file, export_dir, do_lower_case=True, seq_length=128, version=None,
                   kernels="reference", max_batch_size=MAX_BATCH_SIZE,
                   max_string_bytes=MAX_STRING_BYTES):
    """Writes `<export_dir>/encoder/<version>` (traced with `kernels`) and
    `<export_dir>/preprocessing/<version>`, serving requests of at most `max_batch_size` rows and
    `max_string_bytes` bytes per string; returns both.

    Both get the same version (by default one above every existing version of either), so the
    preprocessing that goes with an encoder is the one with its number, and both appear together
    or neither does: a stopped export leaves no half pair for a rerun to trip on.
    """
    encoder = EncoderModule(albert, kernels=kernels, max_batch_size=max_batch_size)
    preprocessing = PreprocessingModule(
        spm_model_file, do_lower_case=do_lower_case, seq_length=seq_length,
        max_seq_length=albert.config.max_position_embeddings, max_batch_size=max_batch_size,
        max_string_bytes=max_string_bytes,
    )
    return tuple(save_versioned_together([
        (encoder, os.path.join(export_dir, "encoder"), encoder.signatures()),
        (preprocessing, os.path.join(export_dir, "preprocessing"),
         {"serving_default": preprocessing.__call__.get_concrete_function()}),
    ], version))
