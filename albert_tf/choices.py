"""Names only, on purpose: the values of the library's settings that the scripts' flags list or default to.

They stay apart from their owners (`training.distribute`, `training.optimization`, `serving/`, ...),
which import TensorFlow or Keras, because `albert_cli` defines its flags (and answers `--help`)
before TensorFlow loads. Each owner checks its setting against the names here and re-exports none.
(Kernel sets are named in `albert_tf.kernels`, which is itself free of TensorFlow.)
"""

STRATEGY_NAMES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
OPTIMIZER_NAMES = ("lamb", "adamw")
# Keras dtype policies: float32 everywhere, or float32 variables with 16-bit compute.
PRECISION_POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")
# How fine-tuning batches are padded (albert_tf.glue.features.make_dataset).
PADDING_MODES = ("dynamic", "bucketed", "fixed")
# The formats of one's own fine-tuning files (albert_tf.glue.table_reader).
TABLE_FILE_FORMATS = ("csv", "tsv", "jsonl")
# The original's SQuAD 2.0 beam (run_squad_v2.py flags).
START_N_TOP = 5
END_N_TOP = 5
# What one request to an export may hold (albert_tf.serving.request_checks): rows (a RACE row is a
# question of four model rows), bytes of any string, SQuAD windows.
MAX_BATCH_SIZE = 128
MAX_RACE_QUESTIONS = MAX_BATCH_SIZE // 4
MAX_STRING_BYTES = 65536
MAX_WINDOWS = 128
# The weights of a LiteRT export (albert_tf.serving.litert).
TFLITE_QUANTIZATIONS = ("float32", "dynamic_int8")
# The sentence embedding of a MediaPipe embedder export (albert_tf.serving.litert.mediapipe).
EMBEDDING_POOLINGS = ("mean", "pooled")
# The output formats of a weights conversion (albert_tf.convert).
CONVERT_FORMATS = ("hf", "keras_hub", "tf1")
