"""Recognising the builder's own files, so that a run never reads or overwrites them as text.

Why: with `--input_file='dir/*'` and the output in `dir`, a second run would read the first run's
TFRecords and statistics as a corpus, and `--output_file` equal to an input would replace the
corpus with TFRecords, both silently. A file counts as the builder's when it is (or would be) an
output of this run, starts with a valid TFRecord header, has the hidden statistics sidecar beside
it, or is a statistics summary.
"""

import struct

from albert_tf.io_utils import refuse_overwriting_inputs
from albert_tf.json_text import parse_json
from data_prep.file_access import sidecar_name
from data_prep.tfrecord import masked_crc32c

STATS_SUFFIX = ".stats.json"


def require_no_overlap(input_paths, output_paths):
    """Raises ValueError if an output (or its sidecar) is one of the inputs."""
    refuse_overwriting_inputs(
        [("--output_file", path) for output in output_paths for path in (output, sidecar_name(output, STATS_SUFFIX))],
        [("--input_file", path) for path in input_paths])


def is_builder_file(files, path):
    """True for a TFRecord, a shard with its statistics sidecar, or a statistics summary."""
    if files.exists(sidecar_name(path, STATS_SUFFIX)):
        return True
    with files.open_read(path) as handle:
        head = handle.read(12)
    if len(head) == 12 and struct.unpack("<I", head[8:])[0] == masked_crc32c(head[:8]):
        return True
    return path.endswith(STATS_SUFFIX) and _is_stats_summary(files, path)


def _is_stats_summary(files, path):
    try:
        with files.open_read(path) as handle:
            record = parse_json(handle.read().decode("utf-8"))
    except ValueError:
        return False
    return isinstance(record, dict) and {"settings", "output_files"} <= record.keys()
