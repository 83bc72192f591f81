"""TFLite model metadata for a BERT-style text model with a SentencePiece tokenizer: what MediaPipe
Tasks' `TextClassifier` and `TextEmbedder` read to run a `.tflite` on raw text.

The metadata is a flatbuffer of the TFLite metadata schema (file identifier "M001") stored in one
of the model's buffers and named "TFLITE_METADATA" in the model's `metadata` list; the files it
names (the SentencePiece model, the label names) follow the model as an uncompressed zip archive.
It says which input is which (tensors named `ids`, `mask`, `segment_ids`, in the model's input
order), that the subgraph's input process unit is a SentencePiece tokenizer, and for a classifier
the output's label file and score range.

The metadata flatbuffer is encoded here with the `flatbuffers` package (a TensorFlow dependency):
the classes MediaPipe generates for its schema would make `mediapipe` (opencv, matplotlib, wheels
for a few platforms) a requirement of every export for a dozen small tables.
The model itself is edited with the LiteRT flatbuffer schema classes TensorFlow ships, as its converter does.
"""

import io
import os
import zipfile

import flatbuffers

METADATA_BUFFER_NAME = "TFLITE_METADATA"
METADATA_FILE_IDENTIFIER = b"M001"
TFLITE_FILE_IDENTIFIER = b"TFL3"
# SentencePieceTokenizerOptions and SubGraphMetadata.input_process_units appeared in schema 1.1.0.
MIN_PARSER_VERSION = "1.1.0"
# The input tensor names MediaPipe's BERT preprocessor looks for, by role.
TOKEN_INPUT_NAMES = {"input_word_ids": "ids", "input_mask": "mask", "input_type_ids": "segment_ids"}
LABELS_FILE = "labels.txt"
# The SentencePiece model's name in the file: fixed, since it is not the user's file (ALBERT's
# normalization is folded into it) and a user's named `labels.txt` would take the labels' place.
SENTENCEPIECE_FILE = "sentencepiece.model"
# What the inputs hold for one text (MediaPipe's BERT preprocessing).
SINGLE_TEXT_INPUTS = {"ids": "Token ids of the text: [CLS] pieces [SEP], then 0s.",
                      "mask": "1 for a token, 0 for padding.",
                      "segment_ids": "0 for every token: one text."}

# Enum values of the metadata schema.
_TENSOR_AXIS_LABELS = 2  # AssociatedFileType
_FEATURE_PROPERTIES = 1  # ContentProperties union
_SENTENCEPIECE_TOKENIZER = 5  # ProcessUnitOptions union


class _Byte(int):
    """A one-byte scalar field: an enum, or the type tag of a union."""


def _encode(builder, value):
    """The offset of `value` written into `builder`: a str, a dict {field slot: value} (a table),
    a list of such (a vector of offsets) or a list of floats."""
    if isinstance(value, str):
        return builder.CreateString(value)
    if isinstance(value, dict):
        return _table(builder, value)
    if all(isinstance(item, float) for item in value):
        builder.StartVector(4, len(value), 4)
        for item in reversed(value):
            builder.PrependFloat32(item)
        return builder.EndVector()
    children = [_encode(builder, item) for item in value]  # written before the vector that holds them
    builder.StartVector(4, len(children), 4)
    for child in reversed(children):
        builder.PrependUOffsetTRelative(child)
    return builder.EndVector()


def _table(builder, fields):
    """A table from {slot: value}; a union takes two slots, its type tag and then its table."""
    offsets = {slot: _encode(builder, value) for slot, value in fields.items() if not isinstance(value, _Byte)}
    builder.StartObject(max(fields, default=-1) + 1)
    for slot, value in fields.items():
        if isinstance(value, _Byte):
            builder.PrependUint8Slot(slot, value, 0)
        else:
            builder.PrependUOffsetTRelativeSlot(slot, offsets[slot], 0)
    return builder.EndObject()


def _associated_file(name, description, file_type=None):
    fields = {0: name, 1: description}  # AssociatedFile: name, description, type
    if file_type is not None:
        fields[2] = _Byte(file_type)
    return fields


def _tensor(name, description, content_range=None, associated_files=None):
    """TensorMetadata: name 0, description 1, content 3, stats 5, associated_files 6."""
    fields = {0: name, 1: description, 3: {0: _Byte(_FEATURE_PROPERTIES), 1: {}}}
    if content_range is not None:
        fields[5] = {0: [float(content_range[1])], 1: [float(content_range[0])]}  # Stats: max, min
    if associated_files:
        fields[6] = associated_files
    return fields


def metadata_flatbuffer(model_name, description, input_roles, spm_file_name, outputs, labels_file=None,
                        input_descriptions=SINGLE_TEXT_INPUTS):
    """The ModelMetadata flatbuffer (bytes) of a one-subgraph text model.

    `input_roles`: the model's inputs in order, each one of `TOKEN_INPUT_NAMES`' values, described
    by `input_descriptions` ({role: text}).
    `outputs`: (name, description) of each output tensor, in the model's output order.
    `labels_file`: the name of the label file of a one-output classifier (its scores are then in
    [0, 1]), or None.
    """
    inputs = [_tensor(role, input_descriptions[role]) for role in input_roles]
    if labels_file is None:
        output_tensors = [_tensor(name, text) for name, text in outputs]
    else:
        (name, text), = outputs
        labels = _associated_file(labels_file, "One label name per line, in the order of the scores.",
                                  _TENSOR_AXIS_LABELS)
        output_tensors = [_tensor(name, text, content_range=(0, 1), associated_files=[labels])]
    tokenizer = {0: _Byte(_SENTENCEPIECE_TOKENIZER),  # ProcessUnit: options type, options
                 1: {0: [_associated_file(spm_file_name, "The SentencePiece model of the tokenizer.")]}}
    subgraph = {2: inputs, 3: output_tensors, 5: [tokenizer]}  # input/output tensor metadata, input process units
    model = {0: model_name, 1: description, 3: [subgraph], 7: MIN_PARSER_VERSION}
    builder = flatbuffers.Builder(1024)
    builder.Finish(_table(builder, model), file_identifier=METADATA_FILE_IDENTIFIER)
    return bytes(builder.Output())


def input_tensor_names(tflite_model):
    """The names of the first subgraph's input tensors of a `.tflite` (bytes), in order."""
    return _tensor_names(tflite_model, "Inputs")


def signature_output_names(tflite_model):
    """The signature's name of each output of the first subgraph of a `.tflite` (bytes), in the
    subgraph's order: the converter names the tensors themselves after the call, not the outputs."""
    from tensorflow.lite.python import schema_py_generated as schema  # pylint: disable=g-import-not-at-top

    model = schema.Model.GetRootAs(tflite_model, 0)
    subgraph, signature = model.Subgraphs(0), model.SignatureDefs(0)
    names = {signature.Outputs(i).TensorIndex(): signature.Outputs(i).Name().decode()
             for i in range(signature.OutputsLength())}
    return [names[subgraph.Outputs(i)] for i in range(subgraph.OutputsLength())]


def _tensor_names(tflite_model, which):
    from tensorflow.lite.python import schema_py_generated as schema  # pylint: disable=g-import-not-at-top

    subgraph = schema.Model.GetRootAs(tflite_model, 0).Subgraphs(0)
    index, count = getattr(subgraph, which), getattr(subgraph, f"{which}Length")()
    return [subgraph.Tensors(index(i)).Name().decode() for i in range(count)]


def input_roles(tflite_model):
    """The MediaPipe role of each input of a model converted from our three named inputs."""
    roles = []
    for name in input_tensor_names(tflite_model):
        matches = [role for input_name, role in TOKEN_INPUT_NAMES.items() if input_name in name]
        if len(matches) != 1:
            raise ValueError(f"model input {name!r} is not one of {list(TOKEN_INPUT_NAMES)}")
        roles.append(matches[0])
    if sorted(roles) != sorted(TOKEN_INPUT_NAMES.values()):
        raise ValueError(f"model inputs {roles} are not one each of {list(TOKEN_INPUT_NAMES.values())}")
    return roles


def with_metadata(tflite_model, metadata, associated_files):
    """`tflite_model` (bytes) with `metadata` in a buffer named METADATA_BUFFER_NAME and
    `associated_files` ({name: bytes}) appended as a zip archive of stored (uncompressed) files,
    which runtimes read in place."""
    from tensorflow.lite.python import schema_py_generated as schema  # pylint: disable=g-import-not-at-top

    model = schema.ModelT.InitFromObj(schema.Model.GetRootAs(tflite_model, 0))
    if any(entry.name.decode() == METADATA_BUFFER_NAME for entry in model.metadata or []):
        raise ValueError(f"the model already has {METADATA_BUFFER_NAME}")
    buffer = schema.BufferT()
    buffer.data = list(metadata)
    model.buffers.append(buffer)
    entry = schema.MetadataT()
    entry.name = METADATA_BUFFER_NAME
    entry.buffer = len(model.buffers) - 1
    model.metadata = (model.metadata or []) + [entry]
    builder = flatbuffers.Builder(len(tflite_model) + len(metadata) + 1024)
    builder.Finish(model.Pack(builder), file_identifier=TFLITE_FILE_IDENTIFIER)
    packed = io.BytesIO(bytes(builder.Output()))
    packed.seek(0, os.SEEK_END)
    with zipfile.ZipFile(packed, "a", compression=zipfile.ZIP_STORED) as archive:
        for name, content in associated_files.items():
            archive.writestr(name, content)
    return packed.getvalue()
