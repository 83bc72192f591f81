"""MediaPipe Tasks' Python API on our `.tflite` files: what an app gets for a raw text.

    python bench/mediapipe_tasks.py classify MODEL.tflite TEXTS.json OUT.json
    python bench/mediapipe_tasks.py embed MODEL.tflite TEXTS.json OUT.json

`classify`: each text's score for every label, in label order (`TextClassifier`, all results), and
the names MediaPipe gives those labels (`category_names`, from the model's label file);
`embed`: each text's embedding, not normalized (`TextEmbedder`). OUT.json also holds the seconds
the task took to load and per call (wall time, one call at a time). Run in a process of its own so
that MediaPipe's runtime never shares one with TensorFlow's.

`token_probe(spm_model_file, seq_length)` is a `.tflite` for `embed` whose embedding is its own
inputs: the ids, mask and segment ids MediaPipe's BERT preprocessing made of a text (`probe_ids`).
"""

import json
import sys
import time

import numpy as np


def _classifier(model_path):
    from mediapipe.tasks.python.core import base_options
    from mediapipe.tasks.python.text import text_classifier

    options = text_classifier.TextClassifierOptions(base_options=base_options.BaseOptions(model_asset_path=model_path))
    return text_classifier.TextClassifier.create_from_options(options)


def _embedder(model_path):
    from mediapipe.tasks.python.core import base_options
    from mediapipe.tasks.python.text import text_embedder

    options = text_embedder.TextEmbedderOptions(base_options=base_options.BaseOptions(model_asset_path=model_path))
    return text_embedder.TextEmbedder.create_from_options(options)


def _categories(task, text):
    return sorted(task.classify(text).classifications[0].categories, key=lambda category: category.index)


def _scores(task, text):
    return [category.score for category in _categories(task, text)]


def _embedding(task, text):
    return list(task.embed(text).embeddings[0].embedding)


def run(kind, model_path, texts):
    """{"outputs": one list of floats per text, "category_names" (`classify`: in label order),
    "load_seconds", "seconds_per_call" (their mean),
    "call_seconds" (each call's, in the order of `texts`)}."""
    make, call = {"classify": (_classifier, _scores), "embed": (_embedder, _embedding)}[kind]
    import mediapipe.tasks.python.text  # noqa: F401  before the clock: load_seconds is the task's, not the import's
    start = time.perf_counter()
    with make(model_path) as task:
        loaded = time.perf_counter()
        outputs, call_seconds = [], []
        for text in texts:
            started = time.perf_counter()
            outputs.append(call(task, text))
            call_seconds.append(time.perf_counter() - started)
        names = [category.category_name for category in _categories(task, texts[0])] if kind == "classify" and texts \
            else None
    return {"outputs": outputs, "load_seconds": loaded - start, "category_names": names,
            "seconds_per_call": sum(call_seconds) / max(len(texts), 1), "call_seconds": call_seconds}


def token_probe(spm_model_file, seq_length):
    """A `.tflite` (bytes) with MediaPipe's text metadata whose float output is its three int32
    [1, seq_length] inputs side by side: ids, mask, segment ids."""
    import tensorflow as tf

    from albert_tf.models.albert_model import INPUT_NAMES
    from albert_tf.serving.litert.mediapipe import EMBEDDER_OUTPUT, with_text_metadata

    @tf.function(input_signature=[tf.TensorSpec([1, seq_length], tf.int32, name=name) for name in INPUT_NAMES])
    def inputs_as_output(input_word_ids, input_mask, input_type_ids):
        return {EMBEDDER_OUTPUT: tf.cast(tf.concat([input_word_ids, input_mask, input_type_ids], 1), tf.float32)}

    converter = tf.lite.TFLiteConverter.from_concrete_functions([inputs_as_output.get_concrete_function()], tf.Module())
    return with_text_metadata(converter.convert(), spm_model_file, "token probe", "Its inputs, as floats.",
                              [(EMBEDDER_OUTPUT, "ids, mask, segment ids")])


def probe_ids(embedding):
    """(ids, segment ids) of the text's tokens (mask 1) from a `token_probe` embedding."""
    ids, mask, segments = np.rint(np.array(embedding)).astype(int).reshape(3, -1)
    return ids[mask == 1].tolist(), segments[mask == 1].tolist()


def main(argv):
    kind, model_path, texts_path, out_path = argv[1:]
    with open(texts_path, encoding="utf-8") as handle:
        texts = json.load(handle)
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(run(kind, model_path, texts), handle)


if __name__ == "__main__":
    main(sys.argv)
