"""`--export_tflite`: checked before any work, the same for every command that writes on-device
models: the runtime lowercases every text, so the model must be uncased; the directory must be
writable and must not hold the files the export would write (a model in use is never replaced).
`export_all` writes the SavedModels and the on-device files of one command as all or none."""

from albert_cli.cli import UsageError, require, require_output_dir


def check_tflite_output(directory, stem, do_lower_case, runtime):
    """UsageError unless `directory` can take `<stem>_<quantization>.tflite` files of an uncased
    model (`do_lower_case`) for `runtime` (how messages name the app runtime)."""
    require(do_lower_case, f"--export_tflite: {runtime} lowercases every text, and a --do_lower_case=false "
            "model would read other tokens than it was trained on")
    require_output_dir("export_tflite", directory, create=False)
    # TensorFlow: only past --help.
    from albert_tf.serving.tflite_export import refuse_existing, tflite_paths  # pylint: disable=g-import-not-at-top

    try:
        refuse_existing(tflite_paths(directory, stem=stem))
    except ValueError as error:
        raise UsageError(f"--export_tflite: {error}") from None


def export_all(saved_models, tflite_files):
    """Runs `tflite_files()` (the LiteRT exports; returns their paths), then `saved_models()` (the
    SavedModel exports; returns theirs), each only if not None. The SavedModels come last: a model
    server watching their directory sees a version only once everything succeeded; if they fail or
    are stopped, the LiteRT files just written are removed. The command's outputs: all or none."""
    from albert_tf.io_utils import removed_on_failure  # pylint: disable=g-import-not-at-top

    written = list(tflite_files()) if tflite_files is not None else []
    with removed_on_failure(written):
        saved = list(saved_models()) if saved_models is not None else []
    if written:
        print(f"wrote the LiteRT models {', '.join(written)}")
    if len(saved) == 1:
        print(f"exported the serving SavedModel to {saved[0]}")
    elif saved:
        print(f"exported {', '.join(saved[:-1])} and {saved[-1]}")
