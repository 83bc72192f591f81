"""What every fine-tuning script loads first: the tokenizer and the config, checked against each other."""

from albert_tf.cli import UsageError, require
from albert_tf.config import AlbertConfig
from albert_tf.tokenization import AlbertTokenizer


def load_tokenizer_and_config(spm_model_file, albert_config_file, do_lower_case, max_seq_length):
    """(AlbertTokenizer, AlbertConfig); a vocabulary mismatch silently ruins results, so it is an error."""
    try:
        tokenizer = AlbertTokenizer(spm_model_file, do_lower_case=do_lower_case)
    except ValueError as error:
        raise UsageError(str(error)) from None  # it names spm_model_file
    try:
        config = AlbertConfig.from_json_file(albert_config_file)
    except ValueError as error:
        raise UsageError(f"--albert_config_file: {error}") from None
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
