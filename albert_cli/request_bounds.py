"""`--export_max_batch_size`, `--export_max_string_bytes` (and for SQuAD `--export_max_windows`): the
bounds an export puts on one request, so that one request cannot exhaust the server (docs/serving.md)."""

from absl import flags

from albert_tf.choices import MAX_BATCH_SIZE, MAX_STRING_BYTES, MAX_WINDOWS

FLAGS = flags.FLAGS


def define_request_bound_flags(max_batch_size=MAX_BATCH_SIZE, rows="rows", windows=False):
    """Defines the flags; `rows` says what a row of this export's requests is."""
    flags.DEFINE_integer("export_max_batch_size", max_batch_size, f"Most {rows} one request to the export may hold.",
                         lower_bound=1)
    flags.DEFINE_integer("export_max_string_bytes", MAX_STRING_BYTES,
                         "Most bytes of any string of one request to the export.", lower_bound=1)
    if windows:
        flags.DEFINE_integer("export_max_windows", MAX_WINDOWS,
                             "Most windows (model rows) one request to the export may make.", lower_bound=1)


def request_bounds():
    """The flags' values as the export functions' keyword arguments."""
    bounds = {"max_batch_size": FLAGS.export_max_batch_size, "max_string_bytes": FLAGS.export_max_string_bytes}
    if "export_max_windows" in FLAGS:
        bounds["max_windows"] = FLAGS.export_max_windows
    return bounds
