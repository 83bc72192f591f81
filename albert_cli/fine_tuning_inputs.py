"""What every fine-tuning script loads first: the tokenizer and the config, checked against each other."""

from albert_cli.bundled import TINY_CONFIG
from albert_cli.cli import UsageError, flag_checked, require
from albert_tf.config import AlbertConfig
from albert_tf.text.tokenization import AlbertTokenizer


def inspected_init_checkpoint(path):
    """The `--init_checkpoint` at `path` looked at once (`checkpoints.inspect`), for its config and its
    weights; None without it."""
    from albert_tf.checkpoints import inspect  # pylint: disable=g-import-not-at-top

    return inspect(path) if path else None


def given_config_file(flag_values):
    """`--albert_config_file` when it was given on the command line, else None (its default is the
    fallback of `model_config`)."""
    return flag_values.albert_config_file if flag_values["albert_config_file"].present else None


def model_config(albert_config_file, init_checkpoint_path, init_checkpoint=None):
    """The model's `AlbertConfig`: `albert_config_file` when given (not None); otherwise the config
    the `--init_checkpoint` at `init_checkpoint_path` carries (a Hugging Face checkpoint's or
    keras-hub preset's, or the `albert_config.json` beside a released tarball's or our runs'
    checkpoints); otherwise the bundled tiny config (the flag's default). `init_checkpoint`:
    `inspected_init_checkpoint`'s answer when the caller has it (it loads the weights from it too)."""
    from albert_tf.checkpoints import albert_config_file as config_file_beside, foreign_config  # pylint: disable=g-import-not-at-top

    config_file = albert_config_file or TINY_CONFIG
    if albert_config_file is None and init_checkpoint_path:
        init_checkpoint = init_checkpoint or inspected_init_checkpoint(init_checkpoint_path)
        config = foreign_config(init_checkpoint)
        if config is not None:
            return config
        config_file = config_file_beside(init_checkpoint) or config_file
    with flag_checked("albert_config_file"):
        return AlbertConfig.from_json_file(config_file)


def check_init_checkpoint_sizes(albert_config_file, init_checkpoint_path, config, init_checkpoint=None):
    """The config's sizes against `--init_checkpoint`'s stored shapes, before a model of them is built
    (run_pretraining.py's too); `albert_config_file`: the file given, or None;
    a checkpoint that cannot be read is left to its load, which names what is wrong with it."""
    from albert_tf.checkpoints.stored_sizes import ConfigSizeMismatch, check_config_sizes  # pylint: disable=g-import-not-at-top

    init_checkpoint = init_checkpoint or inspected_init_checkpoint(init_checkpoint_path)
    source = f"--albert_config_file {albert_config_file}" if albert_config_file else "the model's config"
    try:
        check_config_sizes(config, init_checkpoint, source)
    except ConfigSizeMismatch as error:
        raise UsageError(f"--init_checkpoint: cannot initialise from {init_checkpoint_path}: {error}") from None
    except (ValueError, FileNotFoundError):  # unreadable: its load names what is wrong, in one line
        pass


def load_tokenizer_and_config(task_config, init_checkpoint=None):
    """(AlbertTokenizer, AlbertConfig) of a task's config (`albert_tf.tasks`): its `spm_model_file`,
    `do_lower_case` and `model_config` (`init_checkpoint` is its); a vocabulary mismatch silently
    ruins results, so it is an error."""
    try:
        tokenizer = AlbertTokenizer(task_config.spm_model_file, do_lower_case=task_config.do_lower_case)
    except ValueError as error:
        raise UsageError(str(error)) from None  # it names spm_model_file
    config = model_config(task_config.albert_config_file, task_config.init_checkpoint, init_checkpoint)
    if task_config.init_checkpoint:
        check_init_checkpoint_sizes(task_config.albert_config_file, task_config.init_checkpoint, config,
                                    init_checkpoint)
    max_seq_length = task_config.max_seq_length
    require(config.vocab_size == tokenizer.vocab_size,
            f"--albert_config_file: vocab_size {config.vocab_size} does not match --spm_model_file's "
            f"{tokenizer.vocab_size} pieces")
    require(max_seq_length <= config.max_position_embeddings,
            f"--max_seq_length {max_seq_length} exceeds the model's max_position_embeddings "
            f"{config.max_position_embeddings}")
    return tokenizer, config
