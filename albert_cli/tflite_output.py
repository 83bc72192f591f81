"""`--export_tflite`: checked before any work, the same for every command that writes on-device
models: the runtime lowercases every text, so the model must be uncased; the directory must be
writable and must not hold the files the export would write (a model in use is never replaced)."""

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
