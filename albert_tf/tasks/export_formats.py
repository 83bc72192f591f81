"""A task's exports as all or none, and the LiteRT directory checked before any work.

`check_litert_output`, the same for every task that writes on-device models: the runtime
lowercases every text, so the model must be uncased; the directory must be writable and must not
hold the files the export would write (a model in use is never replaced; what a killed export left
there is removed first). `export_all` writes a task's formats (LiteRT files, SavedModels) as all
or none.
"""

from albert_tf.tasks.config_error import checked, require
from albert_tf.tasks.output_dirs import require_output_dir

# The kinds of output `export_all` writes, each named as its message names it.
LITERT, SAVED_MODEL = "LiteRT", "SavedModel"


def check_litert_output(directory, stem, do_lower_case, runtime, field="export_tflite"):
    """ConfigError naming `field` unless `directory` can take `<stem>_<quantization>.tflite` files
    of an uncased model (`do_lower_case`) for `runtime` (how messages name the app runtime)."""
    require(do_lower_case, field, "{%s}: %s lowercases every text, and a {do_lower_case}=false model would read "
            "other tokens than it was trained on" % (field, runtime))
    require_output_dir(field, directory, create=False)
    # TensorFlow: only when a LiteRT export is asked for.
    from albert_tf.serving.litert.publish import refuse_existing, tflite_paths  # pylint: disable=g-import-not-at-top

    with checked(field):
        refuse_existing(tflite_paths(directory, stem=stem))


def export_all(formats, report):
    """Writes each (kind, write) of `formats` whose `write` is not None (`write()` writes one
    format and returns its paths; kind: LITERT or SAVED_MODEL), the SavedModels last: a model
    server watching their directory sees a version only once everything else succeeded; if one
    fails or is stopped, what the others wrote is removed. Then `report(line)` says what was written."""
    from albert_tf.io_utils import removed_on_failure  # pylint: disable=g-import-not-at-top

    chosen = sorted([(kind, write) for kind, write in formats if write is not None],
                    key=lambda entry: entry[0] == SAVED_MODEL)
    written, reports = [], []
    with removed_on_failure(written):  # what is written so far, as it grows
        for kind, write in chosen:
            paths = list(write())
            written.extend(paths)
            reports.append((kind, paths))
    for kind, paths in reports:
        if kind == LITERT:
            report(f"wrote the LiteRT models {', '.join(paths)}")
        elif len(paths) == 1:
            report(f"exported the serving SavedModel to {paths[0]}")
        else:
            report(f"exported {', '.join(paths[:-1])} and {paths[-1]}")
