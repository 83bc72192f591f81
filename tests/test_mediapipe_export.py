"""The `.tflite` files MediaPipe Tasks runs on raw text: the metadata as MediaPipe's own schema
classes read it, and MediaPipe Python's `TextClassifier` / `TextEmbedder` (in a process of their
own) against our SavedModel and model on the same raw sentences."""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertModel
from albert_tf.serving.litert.publish import export_tflite_embedder
from albert_tf.serving.litert.metadata import metadata_flatbuffer
from albert_tf.text.tokenization import AlbertTokenizer
from glue_test_data import REPO, SPM_MODEL, head_of_shipped, load_bench_script
from model_test_data import tiny
import script_process

# Float32 through MediaPipe (XNNPACK) against TensorFlow: other summation orders only.
FLOAT_TOLERANCE = 1e-5
# Dynamic-range int8, measured on the models below: largest probability change 3.3e-4, embedding
# change 0.0092 of the pooled output's range (SST-2 dev's fine-tuned model: 0.013, bench/results/
# mediapipe_parity_sst2.json); the budgets are about three times the tests' own.
INT8_PROBABILITY_BUDGET = 1e-3
INT8_EMBEDDING_RELATIVE_BUDGET = 0.03

# Raw text as an app sends it: capitals, digits, punctuation, runs of spaces, and one text longer
# than the models' 32 tokens (both truncate it to its first 30 pieces).
SENTENCES = [
    "a charming and often affecting journey .",
    "The Acting is BAD, the plot worse -- 2 stars out of 10!!",
    "  it 's   a   mess  ",
    "unflinchingly bleak and desperate",
    "this is one of those rare films that grows on you , scene by scene , until the whole thing "
    "feels earned : funny , sad , angry and , above all , honest about the people it shows .",
]

mediapipe_tasks = load_bench_script("mediapipe_tasks")
embedding_pooling = load_bench_script("embedding_pooling")


def mediapipe(kind, model_path, texts, tmp_path):
    """`bench/mediapipe_tasks.py kind` in a fresh process: one list of floats per text."""
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    out = tmp_path / "mediapipe.json"
    subprocess.run([sys.executable, os.path.join(REPO, "bench", "mediapipe_tasks.py"), kind, str(model_path),
                    str(tmp_path / "texts.json"), str(out)], check=True, cwd=str(tmp_path),
                   env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", GLOG_minloglevel="2"))
    return np.array(json.loads(out.read_text())["outputs"])


def test_the_metadata_reads_back_with_mediapipes_schema_classes():
    from mediapipe.tasks.metadata import metadata_schema_py_generated as schema

    flat = metadata_flatbuffer("m", "d", ["mask", "ids", "segment_ids"], "30k-clean.model",
                               [("probabilities", "p")], labels_file="labels.txt")
    assert schema.ModelMetadata.ModelMetadataBufferHasIdentifier(flat, 0)
    model = schema.ModelMetadataT.InitFromObj(schema.ModelMetadata.GetRootAs(flat, 0))
    assert model.minParserVersion == b"1.1.0"
    subgraph = model.subgraphMetadata[0]
    assert [tensor.name for tensor in subgraph.inputTensorMetadata] == [b"mask", b"ids", b"segment_ids"]
    (tokenizer,) = subgraph.inputProcessUnits
    assert tokenizer.optionsType == schema.ProcessUnitOptions.SentencePieceTokenizerOptions
    assert [file.name for file in tokenizer.options.sentencePieceModel] == [b"30k-clean.model"]
    (output,) = subgraph.outputTensorMetadata
    assert output.name == b"probabilities"
    assert output.content.contentPropertiesType == schema.ContentProperties.FeatureProperties
    assert (output.stats.min, output.stats.max) == ([0.0], [1.0])
    (labels,) = output.associatedFiles
    assert (labels.name, labels.type) == (b"labels.txt", schema.AssociatedFileType.TENSOR_AXIS_LABELS)


def saved_model_probabilities(export_dir, texts):
    import tensorflow_text  # noqa: F401  registers the SentencePiece ops of the graph

    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    return serve(sentence=tf.constant(texts))["probabilities"].numpy()


@pytest.mark.slow
def test_mediapipe_classifies_raw_text_as_the_savedmodel_of_the_same_run(tmp_path):
    """run_classifier.py fine-tunes a tiny SST-2 classifier and writes its SavedModel and its
    --export_tflite models; MediaPipe's TextClassifier on raw sentences gives the SavedModel's
    serving_default probabilities (float32) and stays within the int8 budget. The SentencePiece
    model is named labels.txt, as the label file in the model's archive: neither replaces the other."""
    data_dir = head_of_shipped(str(tmp_path / "glue"), "SST-2", rows_per_split=64)
    (tmp_path / "spm").mkdir()
    shutil.copy(SPM_MODEL, tmp_path / "spm" / "labels.txt")
    result = script_process.run_python(
        [os.path.join(REPO, "run_classifier.py"), "--task_name=SST-2", f"--data_dir={data_dir}",
         f"--spm_model_file={tmp_path / 'spm' / 'labels.txt'}",
         f"--output_dir={tmp_path / 'out'}", "--do_train", "--train_step=4", "--save_checkpoints_steps=4",
         "--train_batch_size=16", "--max_seq_length=32", "--tflite_seq_length=32",
         f"--export_dir={tmp_path / 'export'}", "--export_version=1", f"--export_tflite={tmp_path / 'tflite'}"],
        cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    expected = saved_model_probabilities(str(tmp_path / "export" / "1"), SENTENCES)
    assert np.ptp(expected[:, 1]) > 20 * FLOAT_TOLERANCE  # the sentences differ by more: the check can fail

    float32 = mediapipe("classify", tmp_path / "tflite" / "classifier_float32.tflite", SENTENCES, tmp_path)
    np.testing.assert_allclose(float32, expected, rtol=0, atol=FLOAT_TOLERANCE)
    int8 = mediapipe("classify", tmp_path / "tflite" / "classifier_dynamic_int8.tflite", SENTENCES, tmp_path)
    assert 0 < np.abs(int8 - expected).max() <= INT8_PROBABILITY_BUDGET
    # MediaPipe reads a text up to its first NUL character (docs/on_device.md, Limits); we read all of it.
    cut = ["a charming and often affecting journey .", "a charming and often affecting journey .\0 THE PLOT IS BAD"]
    assert not np.allclose(*saved_model_probabilities(str(tmp_path / "export" / "1"), cut), rtol=0, atol=FLOAT_TOLERANCE)
    np.testing.assert_array_equal(*mediapipe("classify", tmp_path / "tflite" / "classifier_float32.tflite", cut, tmp_path))
    with zipfile.ZipFile(tmp_path / "tflite" / "classifier_float32.tflite") as archive:
        assert sorted(archive.namelist()) == ["labels.txt", "sentencepiece.model"]
        assert archive.read("labels.txt") == b"negative\npositive\n"  # SST-2's names for its labels 0 and 1


@pytest.mark.slow
@pytest.mark.parametrize("pooling", ["mean", "pooled"])
def test_mediapipe_embeds_raw_text_as_our_encoder(tmp_path, pooling):
    """The mean of the last layer over the text's tokens (the default) or the pooled output."""
    tf.keras.utils.set_random_seed(3)
    albert = AlbertModel(tiny(num_hidden_layers=2))
    paths = export_tflite_embedder(albert, str(tmp_path / "tflite"), SPM_MODEL, seq_length=32, pooling=pooling)
    expected = embedding_pooling.embeddings(albert, AlbertTokenizer(SPM_MODEL), SENTENCES, 32)[pooling]
    assert np.ptp(expected[:, 0]) > 100 * FLOAT_TOLERANCE

    float32, int8 = (mediapipe("embed", path, SENTENCES, tmp_path) for path in paths)
    np.testing.assert_allclose(float32, expected, rtol=0, atol=FLOAT_TOLERANCE)
    assert 0 < np.abs(int8 - expected).max() <= INT8_EMBEDDING_RELATIVE_BUDGET * np.ptp(expected)


def test_mediapipe_tokenizes_as_we_do_but_for_the_digit_comma_rule(tmp_path):
    """MediaPipe lowercases and tokenizes with the SentencePiece model of the metadata (ours, with
    ALBERT's accent stripping in its normalizer), packs [CLS] text [SEP] and sets every segment id
    to 0, as our single-text serving does. What differs is the digit-comma rule, which is ours
    alone: our tokenizer splits a piece "▁2000," into "▁2000" ","."""
    (tmp_path / "probe.tflite").write_bytes(mediapipe_tasks.token_probe(SPM_MODEL, 32))
    texts = SENTENCES + ["How do you spell CLICHÉ, Maelström or naïveté ?", "the election of 2000, everyone"]
    probed = [mediapipe_tasks.probe_ids(row) for row in mediapipe("embed", tmp_path / "probe.tflite", texts, tmp_path)]
    tokenizer = AlbertTokenizer(SPM_MODEL)
    ours = [[tokenizer.cls_id] + tokenizer.encode(text)[:30] + [tokenizer.sep_id] for text in texts]
    assert [ids for ids, _ in probed[:-1]] == ours[:-1]
    assert all(set(segments) == {0} for _, segments in probed)
    assert tokenizer.convert_ids_to_tokens(probed[-1][0])[4:6] == ["▁2000,", "▁everyone"]
    assert tokenizer.convert_ids_to_tokens(ours[-1])[4:7] == ["▁2000", ",", "▁everyone"]


@pytest.mark.slow
def test_export_encoder_writes_the_embedders_beside_the_savedmodels(tmp_path):
    tf.keras.utils.set_random_seed(5)
    config = tiny(num_hidden_layers=2)
    albert = AlbertModel(config)
    albert({"input_word_ids": tf.constant([[2, 3]]), "input_mask": tf.ones([1, 2], tf.int32),
            "input_type_ids": tf.zeros([1, 2], tf.int32)})  # built, so that its weights exist to save
    albert.save_weights(str(tmp_path / "encoder.weights.h5"))
    config.to_json_file(str(tmp_path / "albert_config.json"))
    result = script_process.run_python(
        [os.path.join(REPO, "export_encoder.py"), f"--init_checkpoint={tmp_path / 'encoder.weights.h5'}",
         f"--albert_config_file={tmp_path / 'albert_config.json'}", f"--export_dir={tmp_path / 'hub'}",
         "--export_version=1", "--seq_length=32", f"--export_tflite={tmp_path / 'tflite'}"],
        cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(tmp_path / "tflite")) == ["embedder_dynamic_int8.tflite", "embedder_float32.tflite"]
    expected = embedding_pooling.embeddings(albert, AlbertTokenizer(SPM_MODEL), SENTENCES[:2], 32)["mean"]
    float32 = mediapipe("embed", tmp_path / "tflite" / "embedder_float32.tflite", SENTENCES[:2], tmp_path)
    np.testing.assert_allclose(float32, expected, rtol=0, atol=FLOAT_TOLERANCE)
