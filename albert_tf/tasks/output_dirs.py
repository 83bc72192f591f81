"""A task's output directories checked before any work: writable, not a file, made when asked."""

import os
import tempfile

from albert_tf.tasks.config_error import ConfigError, require


def require_output_dir(field, path, create=True):
    """`field` names a directory this process can write (created when `create`), else a ConfigError.

    Without `create` (an export directory, filled later) only its nearest existing parent is
    checked. Remote paths (gs://...) are left to the first write.
    """
    require(path and path.strip(), field, "{%s} is empty; give a directory" % field)
    if "://" in path:
        return
    probe_dir = os.path.abspath(path)
    while not os.path.lexists(probe_dir):  # the nearest existing part of the path, a dangling link included
        probe_dir = os.path.dirname(probe_dir)
    if os.path.islink(probe_dir) and not os.path.exists(probe_dir):
        raise ConfigError(field, f"{probe_dir} is a symbolic link to {os.readlink(probe_dir)!r}, which does not "
                          "exist; give a directory")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigError(field, f"{path} is a file, not a directory")
    try:
        if create:
            os.makedirs(path, exist_ok=True)
            probe_dir = path
        elif not os.path.isdir(probe_dir):
            raise ConfigError(field, f"cannot write to {path}: {probe_dir} is a file")
        with tempfile.TemporaryFile(dir=probe_dir, prefix=".write-probe-"):
            pass
    except OSError as error:
        raise ConfigError(field, f"cannot write to {path} ({error.strerror or error})") from None


def check_export_version_is_new(export_dir, version, model_dirs=("",)):
    """A ConfigError naming `export_version` if `<export_dir>/<model_dir>/<version>` exists for one
    of `model_dirs` (TF Serving never reloads a version in place); None picks a new one."""
    if version is None:
        return
    for model_dir in model_dirs:
        path = os.path.join(export_dir, model_dir, str(version))
        require(not os.path.exists(path), "export_version", "{export_version}: {path} exists; give another version "
                "(TF Serving never reloads a version in place) or remove it", path=path)
