"""size_and_speed: parameter counts from configs (checked against built models) and the end to end run."""

import json
import os

import pytest

from albert_tf.config import AlbertConfig, SHARING_MODES
from albert_cli.experiments import paper, size_and_speed
from albert_cli.experiments.parameters import backbone_parameters, paper_config
from albert_tf.models import AlbertModel
from tests.experiments_test_data import png_size, tiny_setup


@pytest.mark.parametrize("sharing", SHARING_MODES)
@pytest.mark.parametrize("embedding_size", [8, 24])  # with and without the E->H projection
def test_parameter_count_matches_the_built_model(sharing, embedding_size):
    config = AlbertConfig(vocab_size=50, embedding_size=embedding_size, hidden_size=24, num_hidden_layers=4,
                          num_hidden_groups=2, inner_group_num=2, num_attention_heads=2, intermediate_size=40,
                          max_position_embeddings=32, sharing=sharing)
    assert backbone_parameters(config) == AlbertModel(config).count_params()


def test_paper_sizes():
    # The released configs' exact counts (xxlarge is 223M, not the paper's 235M).
    assert backbone_parameters(paper_config("albert_base")) == 11_683_584
    assert backbone_parameters(paper_config("albert_large")) == 17_683_968
    assert backbone_parameters(paper_config("albert_xlarge")) == 58_724_864
    assert backbone_parameters(paper_config("albert_xxlarge")) == 222_595_584
    assert round(backbone_parameters(paper_config("bert_large")) / 1e6) == 335  # paper: 334M (V=30522)


def test_size_and_speed_end_to_end(tmp_path):
    setup = tiny_setup(tmp_path, train_batch_size=2, max_seq_length=16, train_steps=2)
    configs = {"bert_large": setup.base_config(sharing="none", embedding_size=32),
               "albert_large": setup.base_config(), "albert_xxlarge": setup.base_config(hidden_size=64)}
    results = size_and_speed.run(setup, configs, timed=("bert_large", "albert_large"), log=lambda message: None)
    rows = {row["model"]: row for row in results["models"]}
    assert rows["bert_large"]["speedup"] == rows["bert_large"]["cpu_speedup"] == 1.0
    for key in ("speedup", "cpu_speedup", "examples_per_second", "examples_per_cpu_second"):
        assert rows["albert_large"][key] > 0, key
    assert "examples_per_second" not in rows["albert_xxlarge"]  # counted, not timed
    assert rows["albert_large"]["parameters"] < rows["bert_large"]["parameters"]
    assert rows["albert_xxlarge"]["paper_parameters"] == paper.PARAMETERS["albert_xxlarge"]
    with open(os.path.join(setup.output_dir, "results.json")) as handle:
        assert len(json.load(handle)["models"]) == 3
    assert png_size(os.path.join(setup.output_dir, "figure.png"))[0] > 100
    with pytest.raises(ValueError, match="speed_models"):
        size_and_speed.run(setup, configs, timed=("bert_huge",))
