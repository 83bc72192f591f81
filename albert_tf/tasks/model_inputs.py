"""What every fine-tuning run loads first: the tokenizer and the model's config, checked against
each other, and `init_checkpoint` (looked at once, loaded by one rule for every task)."""

from absl import logging

from albert_tf.config import AlbertConfig
from albert_tf.tasks.config_error import ConfigError, checked, require
from albert_tf.text.tokenization import AlbertTokenizer


def inspected_init_checkpoint(path):
    """The `init_checkpoint` at `path` looked at once (`checkpoints.inspect`), for its config and its
    weights; None without it."""
    from albert_tf.checkpoints import inspect  # pylint: disable=g-import-not-at-top

    return inspect(path) if path else None


def model_config(albert_config_file, init_checkpoint_path, init_checkpoint=None, default_config_file=None):
    """The model's `AlbertConfig`: `albert_config_file` when given (not None); otherwise the config
    the `init_checkpoint` at `init_checkpoint_path` carries (a Hugging Face checkpoint's or
    keras-hub preset's, or the `albert_config.json` beside a released tarball's or our runs'
    checkpoints); otherwise `default_config_file` (a command's: the bundled tiny config).
    `init_checkpoint`: `inspected_init_checkpoint`'s answer when the caller has it (it loads the
    weights from it too)."""
    from albert_tf.checkpoints import albert_config_file as config_file_beside, foreign_config  # pylint: disable=g-import-not-at-top

    config_file = albert_config_file or default_config_file
    if albert_config_file is None and init_checkpoint_path:
        init_checkpoint = init_checkpoint or inspected_init_checkpoint(init_checkpoint_path)
        config = foreign_config(init_checkpoint)
        if config is not None:
            return config
        config_file = config_file_beside(init_checkpoint) or config_file
    require(config_file, "albert_config_file", "{albert_config_file}: not given, and {init_checkpoint} carries no "
            "config")
    with checked("albert_config_file"):
        return AlbertConfig.from_json_file(config_file)


def check_init_checkpoint_sizes(albert_config_file, init_checkpoint_path, config, init_checkpoint=None):
    """The config's sizes against `init_checkpoint`'s stored shapes, before a model of them is built
    (pretraining's too); `albert_config_file`: the file given, or None;
    a checkpoint that cannot be read is left to its load, which names what is wrong with it."""
    from albert_tf.checkpoints.stored_sizes import ConfigSizeMismatch, check_config_sizes  # pylint: disable=g-import-not-at-top

    init_checkpoint = init_checkpoint or inspected_init_checkpoint(init_checkpoint_path)
    source = "the model's config"
    try:
        check_config_sizes(config, init_checkpoint, _GIVEN_FILE if albert_config_file else source)
    except ConfigSizeMismatch as error:
        # The given file is named as its setting: `{albert_config_file} <path>`.
        text = _literal(str(error)).replace(_GIVEN_FILE, "{albert_config_file} " + _literal(albert_config_file))
        raise ConfigError("init_checkpoint", None, "{init_checkpoint}: cannot initialise from {path}: " + text,
                          path=init_checkpoint_path) from None
    except (ValueError, FileNotFoundError):  # unreadable: its load names what is wrong, in one line
        pass


_GIVEN_FILE = "<the given config file>"  # stands for it in `check_config_sizes`' message


def _literal(text):
    """`text` as a part of a `NamesSettings` template that names no setting."""
    return str(text).replace("{", "{{").replace("}", "}}")


def load_tokenizer_and_config(task_config, init_checkpoint=None, default_config_file=None):
    """(AlbertTokenizer, AlbertConfig) of a task's config: its `spm_model_file`, `do_lower_case` and
    `model_config` (`init_checkpoint` and `default_config_file` are its); a vocabulary mismatch
    silently ruins results, so it is an error."""
    tokenizer = AlbertTokenizer(task_config.spm_model_file, do_lower_case=task_config.do_lower_case)  # names its file
    config = model_config(task_config.albert_config_file, task_config.init_checkpoint, init_checkpoint,
                          default_config_file)
    if task_config.init_checkpoint:
        check_init_checkpoint_sizes(task_config.albert_config_file, task_config.init_checkpoint, config,
                                    init_checkpoint)
    require(config.vocab_size == tokenizer.vocab_size, "albert_config_file", "{albert_config_file}: vocab_size "
            "{vocab_size} does not match {spm_model_file}'s {pieces} pieces", vocab_size=config.vocab_size,
            pieces=tokenizer.vocab_size)
    require(task_config.max_seq_length <= config.max_position_embeddings, "max_seq_length", "{max_seq_length} "
            "{length} exceeds the model's max_position_embeddings {most}", length=task_config.max_seq_length,
            most=config.max_position_embeddings)
    return tokenizer, config


def load_init_checkpoint(model, path, extend_positions=None):
    """`init_checkpoint`, the same for every task and pretraining: `checkpoints.load(model, path, ...)`
    (any format it reads) loads the backbone always, and a head of `model` only when the checkpoint
    holds it whole with the same shapes (a checkpoint fine-tuned on the same task); any other head
    starts fresh. Logged; a bad checkpoint is a ConfigError naming `init_checkpoint`."""
    from albert_tf import checkpoints  # pylint: disable=g-import-not-at-top  (TensorFlow: only when used)

    try:
        report = checkpoints.load(model, path, extend_positions=extend_positions, heads_that_differ="fresh")
    except (ValueError, FileNotFoundError) as error:
        raise ConfigError("init_checkpoint", f"cannot initialise from {path}: {error}") from None
    logging.info("init_checkpoint: %s", report)
    return report
