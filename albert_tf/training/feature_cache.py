"""A reused TFRecord feature cache is read through once before training or prediction trusts it.

Feature files are cached next to a JSON sidecar written after them; a file damaged later
(truncated, bytes flipped, a feature stored with another type) would otherwise fail deep inside
training with a long trace, or, cut at a record boundary, be read short without a word. Reading
every record with the parser the dataset uses (in graph, seconds per 100k records) turns that
into one ValueError naming the file and how to rebuild it.
"""


import tensorflow as tf

from albert_tf.error_text import error_line
from albert_tf.json_text import parse_json


def damaged_cache(path, detail):
    return ValueError(f"feature cache {path} is damaged ({detail}); delete it and {path}.json and run again "
                      "to rebuild it")


def read_sidecar(path):
    """The JSON sidecar of the feature file `path` (`<path>.json`), or a ValueError naming it."""
    try:
        with tf.io.gfile.GFile(path + ".json", "r") as handle:
            sidecar = parse_json(handle.read())
    except ValueError as error:  # UnicodeDecodeError too
        raise damaged_cache(path, f"its sidecar {path}.json is not JSON: {error}") from None
    if not isinstance(sidecar, dict):
        raise damaged_cache(path, f"its sidecar {path}.json is not a JSON object")
    return sidecar


def check_feature_file(path, parse, expected_records):
    """Parses every record of `path` with `parse`; raises ValueError unless all `expected_records` read."""
    if not tf.io.gfile.exists(path):
        raise damaged_cache(path, "the file is missing")
    count = tf.data.TFRecordDataset(path).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    try:
        count = int(count.reduce(tf.constant(0, tf.int64), _count))
    except (tf.errors.DataLossError, tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError) as error:
        raise damaged_cache(path, error_line(error)) from None
    if count != expected_records:
        raise damaged_cache(path, f"{count} records, {expected_records} expected")


@tf.autograph.experimental.do_not_convert
def _count(total, _):
    return total + 1
