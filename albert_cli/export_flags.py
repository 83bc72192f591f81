"""The export flags every command that writes a SavedModel takes, defined once: `--export_version`,
the request bounds (`request_bounds`) and `--export_kernels`; `export_options()` gives their values
as the export functions' keyword arguments."""

from absl import flags

from albert_cli import export_version, request_bounds
from albert_tf.choices import MAX_BATCH_SIZE
from albert_tf.kernels import EXPORT_KERNEL_SETS

FLAGS = flags.FLAGS


def define_export_flags(max_batch_size=MAX_BATCH_SIZE, rows="rows", windows=False):
    """Defines the flags (`flags.adopt_module_key_flags(export_flags)` shows them in a command's
    --help); `rows` says what a row of the export's requests is, `windows` adds SQuAD's
    `--export_max_windows`."""
    export_version.define_export_version_flag()
    request_bounds.define_request_bound_flags(max_batch_size, rows=rows, windows=windows)
    flags.DEFINE_enum("export_kernels", "reference", EXPORT_KERNEL_SETS,
                      "Kernel set the export is traced with (plain TF ops only: what every TF Serving build runs).")
    for module in (export_version, request_bounds):  # a command adopting this module's shows them all
        flags.adopt_module_key_flags(module)


def export_options():
    """{version, kernels, and the request bounds}: the flags' values as the export functions' keyword arguments."""
    return {"version": FLAGS.export_version, "kernels": FLAGS.export_kernels, **request_bounds.request_bounds()}
