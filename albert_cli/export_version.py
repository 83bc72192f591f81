"""`--export_version`: the version folder of an export (TF Serving's `<export_dir>/<version>/`).

By default the library picks the Unix time (or one above the highest version there or reserved by
an export being written, so concurrent exports take different versions); a fixed
version gives a path known before the run, as the docs' commands use. A version that exists is
refused before any work (`albert_tf.tasks.output_dirs.check_export_version_is_new`): TF Serving never
reloads a version in place, so it is never overwritten.
"""

from absl import flags


def define_export_version_flag():
    flags.DEFINE_integer("export_version", None, "Version folder of the export, <export_dir>/<export_version>/ "
                         "(default: the Unix time, or one above the highest version there).", lower_bound=1)

