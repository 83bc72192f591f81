"""What every fine-tuning script loads first: the tokenizer and the config, checked against each other."""

from albert_cli.cli import UsageError, flag_checked, require
from albert_tf.config import AlbertConfig
from albert_tf.text.tokenization import AlbertTokenizer


def inspected_init_checkpoint(flag_values):
    """`--init_checkpoint` looked at once (`checkpoints.inspect`), for its config and its weights; None
    without it."""
    from albert_tf.checkpoints import inspect  # pylint: disable=g-import-not-at-top

    return inspect(flag_values.init_checkpoint) if flag_values.init_checkpoint else None


def model_config(flag_values, init_checkpoint=None):
    """The model's `AlbertConfig` from a script's flags: `--albert_config_file` when it was given;
    otherwise the config `--init_checkpoint` carries (a Hugging Face checkpoint's or keras-hub
    preset's, or the `albert_config.json` beside a released tarball's or our runs' checkpoints);
    otherwise the flag's default file. `init_checkpoint`: `inspected_init_checkpoint`'s answer when
    the caller has it (it loads the weights from it too)."""
    from albert_tf.checkpoints import albert_config_file, foreign_config  # pylint: disable=g-import-not-at-top

    config_file = flag_values.albert_config_file
    if not flag_values["albert_config_file"].present and flag_values.init_checkpoint:
        init_checkpoint = init_checkpoint or inspected_init_checkpoint(flag_values)
        config = foreign_config(init_checkpoint)
        if config is not None:
            return config
        config_file = albert_config_file(init_checkpoint) or config_file
    with flag_checked("albert_config_file"):
        return AlbertConfig.from_json_file(config_file)


def check_init_checkpoint_sizes(flag_values, config, init_checkpoint):
    """The config's sizes against `--init_checkpoint`'s stored shapes, before a model of them is built
    (run_pretraining.py's too);
    a checkpoint that cannot be read is left to its load, which names what is wrong with it."""
    from albert_tf.checkpoints.stored_sizes import ConfigSizeMismatch, check_config_sizes  # pylint: disable=g-import-not-at-top

    init_checkpoint = init_checkpoint or inspected_init_checkpoint(flag_values)
    source = (f"--albert_config_file {flag_values.albert_config_file}" if flag_values["albert_config_file"].present
              else "the model's config")
    try:
        check_config_sizes(config, init_checkpoint, source)
    except ConfigSizeMismatch as error:
        raise UsageError(f"--init_checkpoint: cannot initialise from {flag_values.init_checkpoint}: {error}") from None
    except (ValueError, FileNotFoundError):  # unreadable: its load names what is wrong, in one line
        pass


def load_tokenizer_and_config(flag_values, init_checkpoint=None):
    """(AlbertTokenizer, AlbertConfig) from `--spm_model_file`, `do_lower_case` and `model_config`
    (`init_checkpoint` is its); a vocabulary mismatch silently ruins results, so it is an error."""
    try:
        tokenizer = AlbertTokenizer(flag_values.spm_model_file, do_lower_case=flag_values.do_lower_case)
    except ValueError as error:
        raise UsageError(str(error)) from None  # it names spm_model_file
    config = model_config(flag_values, init_checkpoint)
    if flag_values.init_checkpoint:
        check_init_checkpoint_sizes(flag_values, config, init_checkpoint)
    max_seq_length = flag_values.max_seq_length
    require(config.vocab_size == tokenizer.vocab_size,
            f"--albert_config_file: vocab_size {config.vocab_size} does not match --spm_model_file's "
            f"{tokenizer.vocab_size} pieces")
    require(max_seq_length <= config.max_position_embeddings,
            f"--max_seq_length {max_seq_length} exceeds the model's max_position_embeddings "
            f"{config.max_position_embeddings}")
    return tokenizer, config
