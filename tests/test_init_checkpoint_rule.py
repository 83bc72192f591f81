"""`--init_checkpoint` means the same for every fine-tuning task (`cli.load_init_checkpoint`): the
backbone always; the task head only when the checkpoint holds one of the same kind and shapes."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_cli.cli import load_init_checkpoint
from albert_tf import AlbertClassifier, AlbertConfig, AlbertPretrainingModel
from albert_tf.checkpoints import backbone_variables, tf1_variables
from albert_tf.models import AlbertMultipleChoice, AlbertQuestionAnswering

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def config():
    return AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_tiny.json")).replace(
        vocab_size=100, embedding_size=16, hidden_size=32, intermediate_size=64, max_position_embeddings=32)


def built(model):
    model(model.example_inputs(), training=False)
    return model


TASK_MODELS = {
    "glue": lambda: AlbertClassifier(config(), num_labels=2),
    "squad v1.1": lambda: built(AlbertQuestionAnswering(config())),
    "squad v2.0": lambda: built(AlbertQuestionAnswering(config(), version_2_with_negative=True)),
    "race": lambda: built(AlbertMultipleChoice(config())),
}


def seeded(make, seed):
    """`make()` with its weights drawn from `seed` (each seed's kernels differ)."""
    keras.utils.set_random_seed(seed)
    return make()


def head_and_backbone(model):
    variables = {name: variable.numpy() for name, variable in tf1_variables(model).items()}
    backbone = set(backbone_variables(model.albert))
    return ({name: value for name, value in variables.items() if name not in backbone},
            {name: value for name, value in variables.items() if name in backbone})


def assert_equal(ours, theirs):
    assert ours.keys() == theirs.keys() and ours
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)


@pytest.mark.parametrize("task", sorted(TASK_MODELS))
def test_a_checkpoint_of_the_same_task_gives_backbone_and_head(task, tmp_path):
    source = seeded(TASK_MODELS[task], 1)
    prefix = tf.train.Checkpoint(model=source).write(str(tmp_path / "ckpt-1"))
    target = seeded(TASK_MODELS[task], 2)
    report = load_init_checkpoint(target, prefix)
    assert report.new_heads == () and report.missing == ()
    for ours, theirs in zip(head_and_backbone(target), head_and_backbone(source)):
        assert_equal(ours, theirs)


@pytest.mark.parametrize("task", sorted(TASK_MODELS))
def test_a_pretraining_checkpoint_gives_the_backbone_and_a_fresh_head(task, tmp_path):
    pretrained = seeded(lambda: AlbertPretrainingModel(config()), 3)
    prefix = tf.train.Checkpoint(model=pretrained).write(str(tmp_path / "ckpt-1"))
    target = seeded(TASK_MODELS[task], 4)
    head_before, _ = head_and_backbone(target)
    report = load_init_checkpoint(target, prefix)
    assert report.new_heads and set(report.other_heads) == {"masked_lm_head", "sentence_order_head"}
    head_after, backbone = head_and_backbone(target)
    assert_equal(head_after, head_before)
    assert_equal(backbone, {name: variable.numpy() for name, variable in backbone_variables(pretrained.albert).items()})


@pytest.mark.parametrize("source_task, target_task", [("squad v1.1", "squad v2.0"), ("race", "glue")])
def test_a_head_of_another_task_starts_fresh(source_task, target_task, tmp_path):
    source = seeded(TASK_MODELS[source_task], 5)
    prefix = tf.train.Checkpoint(model=source).write(str(tmp_path / "ckpt-1"))
    target = seeded(TASK_MODELS[target_task], 6)
    head_before, _ = head_and_backbone(target)
    report = load_init_checkpoint(target, prefix)
    assert report.new_heads == report.other_heads and len(report.new_heads) == 1
    head_after, backbone = head_and_backbone(target)
    assert_equal(head_after, head_before)
    assert_equal(backbone, head_and_backbone(source)[1])
