"""AlbertConfig: the released JSON format, validation, and the bundled configs."""

import json

import pytest

from albert_tf import AlbertConfig

RELEASED_V2_BASE = {
    "attention_probs_dropout_prob": 0,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0,
    "embedding_size": 128,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "num_hidden_groups": 1,
    "net_structure_type": 0,
    "gap_size": 0,
    "num_memory_blocks": 0,
    "inner_group_num": 1,
    "down_scale_factor": 1,
    "type_vocab_size": 2,
    "vocab_size": 30000,
}


def write_json(tmp_path, values, name="albert_config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(values))
    return str(path)


def test_reads_released_file_with_every_released_key(tmp_path):
    values = dict(RELEASED_V2_BASE, layers_to_keep=[])  # v1 xxlarge carries layers_to_keep
    config = AlbertConfig.from_json_file(write_json(tmp_path, values))
    assert config.hidden_size == 768 and config.num_attention_heads == 12
    assert config.sharing == "all"
    assert config.released_keys["layers_to_keep"] == []
    assert config.released_keys["net_structure_type"] == 0


def test_json_round_trip_keeps_every_key(tmp_path):
    config = AlbertConfig.from_json_file(write_json(tmp_path, RELEASED_V2_BASE))
    out = tmp_path / "out.json"
    config.to_json_file(str(out))
    written = json.loads(out.read_text())
    for key, value in RELEASED_V2_BASE.items():
        assert written[key] == value
    assert AlbertConfig.from_json_file(str(out)) == config
    assert list(written) == sorted(written)  # sorted keys, like the original's to_json_string


def test_original_defaults_describe_xxlarge():
    config = AlbertConfig(vocab_size=30000)
    assert (config.hidden_size, config.num_attention_heads, config.intermediate_size) == (4096, 64, 16384)
    assert config.hidden_act == "gelu" and config.embedding_size == 128


@pytest.mark.parametrize(
    "name, hidden, layers, heads, intermediate",
    [
        ("base", 768, 12, 12, 3072),
        ("large", 1024, 24, 16, 4096),
        ("xlarge", 2048, 24, 16, 8192),
        ("xxlarge", 4096, 12, 64, 16384),
    ],
)
def test_bundled_v2_configs(name, hidden, layers, heads, intermediate):
    config = AlbertConfig.from_json_file(f"configs/albert_{name}.json")
    assert (config.hidden_size, config.num_hidden_layers) == (hidden, layers)
    assert (config.num_attention_heads, config.intermediate_size) == (heads, intermediate)
    assert config.hidden_dropout_prob == 0 and config.attention_probs_dropout_prob == 0  # v2
    assert (config.vocab_size, config.embedding_size) == (30000, 128)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"num_attention_heads": 7}, "`hidden_size` (768) must be divisible by `num_attention_heads` (7)"),
        ({"num_hidden_groups": 5}, "`num_hidden_layers` (12) must be divisible by `num_hidden_groups` (5)"),
        ({"hidden_act": "swish"}, "unknown `hidden_act` 'swish'"),
        ({"sharing": "half"}, "unknown `sharing` 'half'"),
        ({"hidden_size": 0}, "`hidden_size` must be a positive integer"),
        ({"vocab_size": -3}, "`vocab_size` must be a positive integer"),
        ({"inner_group_num": 1.5}, "`inner_group_num` must be a positive integer"),
        ({"hidden_dropout_prob": 1.0}, "`hidden_dropout_prob` must be in [0, 1)"),
        ({"hidden_sise": 768}, "unknown key(s) ['hidden_sise']"),
    ],
)
def test_invalid_configs_name_the_key(changes, message):
    with pytest.raises(ValueError) as error:
        AlbertConfig.from_dict(dict(RELEASED_V2_BASE, **changes))
    assert message in str(error.value)


def test_file_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        AlbertConfig.from_json_file(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json is not valid JSON"):
        AlbertConfig.from_json_file(str(bad))
    wrong = write_json(tmp_path, dict(RELEASED_V2_BASE, sharing="x"), "wrong.json")
    with pytest.raises(ValueError, match="wrong.json: AlbertConfig: unknown `sharing`"):
        AlbertConfig.from_json_file(wrong)
