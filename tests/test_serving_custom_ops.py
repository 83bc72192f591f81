"""The custom ops a raw-text SavedModel needs from its server: tensorflow-text's SentencePiece and
Unicode-normalization ops, nothing else (docs/serving.md, "Running the model server")."""

import json
import os
import subprocess
import sys

import tensorflow_text  # noqa: F401  registers the export's text ops in this process
from tensorflow.python.framework import op_def_registry

from albert_tf import AlbertClassifier, AlbertConfig
from albert_tf.glue.tasks import get_task
from albert_tf.serving.classifier_export import export_classifier
from glue_test_data import SPM_MODEL, TINY_CONFIG
from test_glue_serving import saved_graph_def

# The export's custom ops and the tensorflow-text libraries that register them (all in the model
# server's tensorflow-text ops_lib).
CUSTOM_OPS = ["NormalizeUTF8", "SentencepieceIdToStringOp", "SentencepieceOp", "SentencepieceStringToIdOp",
              "SentencepieceTokenizeOp"]
LIBRARIES = {"_normalize_ops.so", "_sentencepiece_tokenizer.so"}


def op_types(graph_def):
    """Every op type of a GraphDef, its function library's included."""
    types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        types |= {node.op for node in function.node_def}
    return types - {function.signature.name for function in graph_def.library.function}


# In a fresh process, without tensorflow_text imported: each library's ops are the op wrappers of
# the module `tf.load_op_library` makes for it, registered by loading it and not before.
LIST_TEXT_OPS = """
import glob, importlib.util, json, os
import tensorflow as tf
from tensorflow.python.framework import op_def_registry
directory = os.path.join(os.path.dirname(importlib.util.find_spec("tensorflow_text").origin), "python", "ops")
ops = {}
for library in sorted(glob.glob(os.path.join(directory, "*.so"))):
    names = [name for name in dir(tf.load_op_library(library)) if name[:1].isupper()]
    ops.update({name: os.path.basename(library) for name in names
                if name not in ops and name not in dir(tf.raw_ops) and op_def_registry.get(name) is not None})
print(json.dumps(ops))
"""


def tensorflow_text_ops():
    """{op name: the tensorflow-text library (.so) that registers it}."""
    listed = subprocess.run([sys.executable, "-c", LIST_TEXT_OPS], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert listed.returncode == 0, listed.stderr[-3000:]
    return json.loads(listed.stdout.strip().splitlines()[-1])


def test_the_raw_text_export_needs_tensorflow_texts_text_ops_and_core_ops_only(tmp_path):
    task = get_task("sst-2")
    classifier = AlbertClassifier(AlbertConfig.from_json_file(TINY_CONFIG), task.num_labels)
    exported = export_classifier(classifier, task, SPM_MODEL, str(tmp_path / "classifier"), max_seq_length=32)
    needed = op_types(saved_graph_def(exported))
    text_ops = tensorflow_text_ops()
    custom = sorted(op for op in needed if op in text_ops)
    assert custom == CUSTOM_OPS, custom
    assert {text_ops[op] for op in custom} == LIBRARIES
    # Everything else is TensorFlow's own (registered, and not by tensorflow-text).
    unknown = sorted(op for op in needed - set(custom) if op_def_registry.get(op) is None)
    assert unknown == []
