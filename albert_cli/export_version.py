"""`--export_version`: the version folder of an export (TF Serving's `<export_dir>/<version>/`).

By default the library picks the Unix time (or one above the highest version there or reserved by
an export being written, so concurrent exports take different versions); a fixed
version gives a path known before the run, as the docs' commands use. A version that exists is
refused before any work: TF Serving never reloads a version in place, so it is never overwritten.
"""

import os

from absl import flags

from albert_cli.cli import require


def define_export_version_flag():
    flags.DEFINE_integer("export_version", None, "Version folder of the export, <export_dir>/<export_version>/ "
                         "(default: the Unix time, or one above the highest version there).", lower_bound=1)


def check_export_version_is_new(export_dir, version, model_dirs=("",)):
    """A UsageError if `<export_dir>/<model_dir>/<version>` exists for one of `model_dirs`."""
    if version is None:
        return
    for model_dir in model_dirs:
        path = os.path.join(export_dir, model_dir, str(version))
        require(not os.path.exists(path), f"--export_version: {path} exists; give another version "
                "(TF Serving never reloads a version in place) or remove it")
