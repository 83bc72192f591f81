"""What every fine-tuning script loads first: the tokenizer and the config, checked against each other."""

import os

from albert_cli.export_version import check_export_version_is_new
from albert_cli.cli import UsageError, require, require_output_dir, settle_kernels, start_determinism
from albert_cli.output_lock import lock_output_dir
from albert_tf.config import AlbertConfig
from albert_tf.text.tokenization import AlbertTokenizer


def model_config(flag_values):
    """The model's `AlbertConfig` from a script's flags: `--albert_config_file` when it was given;
    otherwise the config `--init_checkpoint` carries (a Hugging Face checkpoint's or keras-hub
    preset's, or the `albert_config.json` beside a released tarball's or our runs' checkpoints);
    otherwise the flag's default file."""
    from albert_tf.checkpoints import albert_config_file, foreign_config  # pylint: disable=g-import-not-at-top

    config_file = flag_values.albert_config_file
    if not flag_values["albert_config_file"].present and flag_values.init_checkpoint:
        config = foreign_config(flag_values.init_checkpoint)
        if config is not None:
            return config
        config_file = albert_config_file(flag_values.init_checkpoint) or config_file
    try:
        return AlbertConfig.from_json_file(config_file)
    except ValueError as error:
        raise UsageError(f"--albert_config_file: {error}") from None


def load_tokenizer_and_config(flag_values):
    """(AlbertTokenizer, AlbertConfig) from `--spm_model_file`, `do_lower_case` and `model_config`;
    a vocabulary mismatch silently ruins results, so it is an error."""
    try:
        tokenizer = AlbertTokenizer(flag_values.spm_model_file, do_lower_case=flag_values.do_lower_case)
    except ValueError as error:
        raise UsageError(str(error)) from None  # it names spm_model_file
    config = model_config(flag_values)
    max_seq_length = flag_values.max_seq_length
    require(config.vocab_size == tokenizer.vocab_size,
            f"--albert_config_file: vocab_size {config.vocab_size} does not match --spm_model_file's "
            f"{tokenizer.vocab_size} pieces")
    require(max_seq_length <= config.max_position_embeddings,
            f"--max_seq_length {max_seq_length} exceeds the model's max_position_embeddings "
            f"{config.max_position_embeddings}")
    return tokenizer, config


def compute_dtype(mixed_precision):
    """The Keras dtype policy for a `--mixed_precision` value (None = float32)."""
    return None if mixed_precision == "float32" else mixed_precision


def start_task_run(flag_values):
    """What the SQuAD and RACE runners do first: (tokenizer, config, strategy, feature cache dir),
    the output and export directories checked before any work."""
    from albert_tf.training.distribute import get_strategy  # pylint: disable=g-import-not-at-top (TensorFlow)

    start_determinism(flag_values)
    tokenizer, config = load_tokenizer_and_config(flag_values)
    try:
        strategy = get_strategy(flag_values.strategy, tpu_address=flag_values.tpu_name)
    except ValueError as error:
        raise UsageError(f"--strategy: {error}") from None
    settle_kernels(flag_values)
    cache_dir = flag_values.cached_dir or os.path.join(flag_values.output_dir, "features")
    require_output_dir("output_dir", flag_values.output_dir)
    lock_output_dir("output_dir", flag_values.output_dir)
    if flag_values.export_dir is not None:
        require_output_dir("export_dir", flag_values.export_dir, create=False)
        check_export_version_is_new(flag_values.export_dir, flag_values.export_version)
    return tokenizer, config, strategy, cache_dir


def trained_model(flag_values, build_model):
    """The best model fine-tuned in --output_dir, else `build_model(--init_checkpoint)`'s."""
    from albert_tf.training.evaluated_training import read_best_metrics, restore_best  # pylint: disable=g-import-not-at-top (TensorFlow)

    fine_tuned = read_best_metrics(flag_values.output_dir) is not None
    require(fine_tuned or flag_values.init_checkpoint,
            f"--output_dir {flag_values.output_dir} holds no fine-tuned model (run with --do_train) and no "
            "--init_checkpoint was given")
    model = build_model(None if fine_tuned else flag_values.init_checkpoint)
    if fine_tuned:
        restore_best(model, flag_values.output_dir)
    return model
