"""The one loader (`checkpoints.load`) on every format, and TF1 checkpoints out: names, round trips,
strictness, heads only one side has, init_from_group0."""

import fnmatch
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertClassifier, AlbertConfig, AlbertModel, AlbertPretrainingModel
from albert_tf.checkpoints import HEAD_NAMES, CheckpointMismatchError, load, save_tf1_checkpoint, tf1_variables
from albert_tf.models import AlbertMultipleChoice, AlbertQuestionAnswering
from albert_tf.training.resume_check import mismatches

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = "bert/encoder/transformer/group_0/inner_group_0/"

# Reference section 2.4: the 32 variables of albert_base with its pretraining heads.
ALBERT_BASE_VARIABLES = {
    "bert/embeddings/word_embeddings": [30000, 128],
    "bert/embeddings/token_type_embeddings": [2, 128],
    "bert/embeddings/position_embeddings": [512, 128],
    "bert/embeddings/LayerNorm/beta": [128],
    "bert/embeddings/LayerNorm/gamma": [128],
    "bert/encoder/embedding_hidden_mapping_in/kernel": [128, 768],
    "bert/encoder/embedding_hidden_mapping_in/bias": [768],
    BLOCK + "attention_1/self/query/kernel": [768, 768],
    BLOCK + "attention_1/self/query/bias": [768],
    BLOCK + "attention_1/self/key/kernel": [768, 768],
    BLOCK + "attention_1/self/key/bias": [768],
    BLOCK + "attention_1/self/value/kernel": [768, 768],
    BLOCK + "attention_1/self/value/bias": [768],
    BLOCK + "attention_1/output/dense/kernel": [768, 768],
    BLOCK + "attention_1/output/dense/bias": [768],
    BLOCK + "LayerNorm/beta": [768],
    BLOCK + "LayerNorm/gamma": [768],
    BLOCK + "ffn_1/intermediate/dense/kernel": [768, 3072],
    BLOCK + "ffn_1/intermediate/dense/bias": [3072],
    BLOCK + "ffn_1/intermediate/output/dense/kernel": [3072, 768],
    BLOCK + "ffn_1/intermediate/output/dense/bias": [768],
    BLOCK + "LayerNorm_1/beta": [768],
    BLOCK + "LayerNorm_1/gamma": [768],
    "bert/pooler/dense/kernel": [768, 768],
    "bert/pooler/dense/bias": [768],
    "cls/predictions/transform/dense/kernel": [768, 128],
    "cls/predictions/transform/dense/bias": [128],
    "cls/predictions/transform/LayerNorm/beta": [128],
    "cls/predictions/transform/LayerNorm/gamma": [128],
    "cls/predictions/output_bias": [30000],
    "cls/seq_relationship/output_weights": [2, 768],
    "cls/seq_relationship/output_bias": [2],
}


def _config(**changes):
    """A small config with several groups and inner groups (fast to build and run)."""
    tiny = AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_tiny.json"))
    values = dict(vocab_size=100, embedding_size=16, hidden_size=32, intermediate_size=64,
                  max_position_embeddings=32, num_hidden_groups=2, inner_group_num=2)
    values.update(changes)
    return tiny.replace(**values)


def _randomize(model, seed):
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.standard_normal(tuple(variable.shape)).astype(np.float32) * 0.1)
    return model


def _values(model):
    return {name: variable.numpy() for name, variable in tf1_variables(model).items()}


def _inputs(config):
    word_ids = np.arange(16, dtype=np.int32).reshape(2, 8) % config.vocab_size
    mask = np.ones((2, 8), np.int32)
    mask[1, 5:] = 0
    return {
        "input_word_ids": word_ids,
        "input_mask": mask,
        "input_type_ids": np.repeat([[0] * 4 + [1] * 4], 2, axis=0).astype(np.int32),
        "masked_lm_positions": np.array([[1, 2], [3, 4]], np.int32),
    }


def _write(prefix, arrays):
    """A TF1-format checkpoint with exactly these {name: array} entries."""
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    names = sorted(arrays)
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(arrays[name]) for name in names])
    return prefix


@pytest.fixture(scope="module")
def saved_pretraining(tmp_path_factory):
    """A randomized small pretraining model and its checkpoint prefix."""
    model = _randomize(AlbertPretrainingModel(_config()), seed=0)
    prefix = save_tf1_checkpoint(model, str(tmp_path_factory.mktemp("saved") / "model.ckpt-best"))
    return model, prefix


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn", "none"])
def test_round_trip_gives_identical_weights_and_outputs(sharing, tmp_path):
    config = _config(sharing=sharing)
    source = _randomize(AlbertPretrainingModel(config), seed=1)
    target = _randomize(AlbertPretrainingModel(config), seed=2)
    assert len(tf1_variables(source)) == len(source.weights)  # Every weight has a TF1 name.

    report = load(target, save_tf1_checkpoint(source, str(tmp_path / "ckpt")))

    assert (report.missing, report.unused, report.skipped) == ((), (), ())
    assert len(report.loaded) == len(source.weights)
    expected = _values(source)
    for name, value in _values(target).items():
        np.testing.assert_array_equal(value, expected[name], err_msg=name)
    inputs = _inputs(config)
    source_outputs = source(inputs)
    for name, value in target(inputs).items():
        np.testing.assert_array_equal(value.numpy(), source_outputs[name].numpy(), err_msg=name)


@pytest.mark.parametrize(
    "sharing, attention_owners, ffn_owners",
    [("all", [0, 1], [0, 1]), ("attention", [0, 1], [0, 1, 2, 3]),
     ("ffn", [0, 1, 2, 3], [0, 1]), ("none", [0, 1, 2, 3], [0, 1, 2, 3])],
)
def test_unshared_sublayers_are_named_by_layer_index(sharing, attention_owners, ffn_owners):
    names = tf1_variables(AlbertModel(_config(sharing=sharing)))
    transformer = "bert/encoder/transformer/"

    def scopes(leaf):
        return sorted(name[len(transformer):-len(leaf)] for name in names
                      if name.startswith(transformer) and name.endswith(leaf))

    def expected(owners):
        return [f"group_{owner}/inner_group_{inner}" for owner in owners for inner in (0, 1)]

    assert scopes("/attention_1/self/query/kernel") == expected(attention_owners)
    assert scopes("/LayerNorm/gamma") == expected(attention_owners)
    assert scopes("/ffn_1/intermediate/dense/kernel") == expected(ffn_owners)
    assert scopes("/LayerNorm_1/gamma") == expected(ffn_owners)


def test_albert_base_has_the_original_32_names_and_shapes(tmp_path):
    config = AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_base.json"))
    model = AlbertPretrainingModel(config)
    save_tf1_checkpoint(model, str(tmp_path / "model.ckpt-best"))

    assert dict(tf.train.list_variables(str(tmp_path))) == ALBERT_BASE_VARIABLES
    backbone = {name: list(variable.shape) for name, variable in tf1_variables(model.albert).items()}
    expected = {name: shape for name, shape in ALBERT_BASE_VARIABLES.items() if name.startswith("bert/")}
    assert backbone == expected
    assert len(backbone) == 25


def test_no_projection_names_when_embedding_equals_hidden():
    names = tf1_variables(AlbertModel(_config(embedding_size=32)))
    assert not [name for name in names if "embedding_hidden_mapping_in" in name]
    assert len(names) == 5 + 2 * (10 + 6) * 2 + 2  # embeddings, 2 groups x 2 blocks, pooler.


def test_save_writes_complete_files_state_and_global_step(saved_pretraining, tmp_path):
    model, _ = saved_pretraining
    prefix = str(tmp_path / "out" / "model.ckpt-7")
    save_tf1_checkpoint(model, prefix, global_step=7)
    save_tf1_checkpoint(model, prefix, global_step=7)  # Overwriting a prefix is fine.

    assert sorted(os.listdir(tmp_path / "out")) == [
        "checkpoint", "model.ckpt-7.data-00000-of-00001", "model.ckpt-7.index"
    ]
    assert tf.train.latest_checkpoint(str(tmp_path / "out")) == prefix
    reader = tf.train.load_checkpoint(prefix)
    assert reader.get_tensor("global_step") == 7
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    report = load(model, prefix)
    assert report.skipped == ("global_step",)


def test_save_refuses_graph_mode(saved_pretraining, tmp_path):
    model, _ = saved_pretraining
    with pytest.raises(RuntimeError, match="call it eagerly"):
        tf.function(lambda: save_tf1_checkpoint(model, str(tmp_path / "ckpt")))()


def test_hub_module_prefix_and_optimizer_slots(saved_pretraining, tmp_path):
    model, _ = saved_pretraining
    arrays = {f"module/{name}": value for name, value in _values(model).items()}
    word = "bert/embeddings/word_embeddings"
    training_state = {
        f"{word}/adam_m": arrays[f"module/{word}"], f"{word}/adam_v": arrays[f"module/{word}"],
        f"{word}/lamb_m": arrays[f"module/{word}"], f"{word}/lamb_v": arrays[f"module/{word}"],
        f"bert/pooler/dense/bias/AdamWeightDecayOptimizer": np.zeros(32, np.float32),
        f"bert/pooler/dense/bias/AdamWeightDecayOptimizer_1": np.zeros(32, np.float32),
        "global_step": np.int64(1000),
    }
    prefix = _write(str(tmp_path / "hub"), {**arrays, **training_state})
    target = _randomize(AlbertPretrainingModel(_config()), seed=3)

    report = load(target, prefix)

    assert report.hub_prefix
    assert sorted(report.skipped) == sorted(training_state)
    assert report.unused == ()
    for name, value in _values(target).items():
        np.testing.assert_array_equal(value, arrays[f"module/{name}"], err_msg=name)
    assert "`module/` prefix stripped" in str(report)
    assert "Skipped 7 entries that are not weights to load" in str(report)


def test_paths_prefix_index_directory_and_hub_module(saved_pretraining, tmp_path):
    model, prefix = saved_pretraining
    directory = os.path.dirname(prefix)
    for path in (prefix, prefix + ".index", directory):
        assert load(model, path).path == prefix

    # A copied `checkpoint` file may name a path that does not exist here; a Hub module keeps
    # its weights in variables/variables.
    released = tmp_path / "albert_base"
    _write(str(released / "model.ckpt-best"), _values(model))
    (released / "checkpoint").write_text('model_checkpoint_path: "/elsewhere/model.ckpt-5"\n')
    assert load(model, str(released)).path == str(released / "model.ckpt-best")
    hub = tmp_path / "hub_module"
    _write(str(hub / "variables" / "variables"), _values(model))
    assert load(model, str(hub)).path == str(hub / "variables" / "variables")


def test_not_a_checkpoint_is_reported(saved_pretraining, tmp_path):
    model, _ = saved_pretraining
    with pytest.raises(FileNotFoundError, match=r"nowhere is not a checkpoint: .*nowhere\.index does not exist"):
        load(model, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match=r"holds no single checkpoint \(\*\.index files: none\)"):
        load(model, str(tmp_path))
    (tmp_path / "junk.index").write_text("not a checkpoint")
    with pytest.raises(ValueError, match=r"junk is not a readable checkpoint"):
        load(model, str(tmp_path / "junk"))


def test_strict_reports_missing_and_unused_names_and_assigns_nothing(saved_pretraining, tmp_path):
    model, _ = saved_pretraining
    arrays = _values(model)
    pooler_bias = arrays.pop("bert/pooler/dense/bias")
    arrays["bert/extra/kernel"] = pooler_bias
    prefix = _write(str(tmp_path / "ckpt"), arrays)
    target = _randomize(AlbertPretrainingModel(_config()), seed=4)
    before = _values(target)

    with pytest.raises(CheckpointMismatchError) as error:
        load(target, prefix)
    assert str(error.value) == (
        f"{prefix} does not match AlbertPretrainingModel: "
        "1 model variable(s) missing from the checkpoint: bert/pooler/dense/bias; "
        "1 checkpoint weight(s) unused by the model: bert/extra/kernel; "
        "build the model from the checkpoint's config, or pass strict=False."
    )
    assert error.value.report.missing == ("bert/pooler/dense/bias",)
    for name, value in _values(target).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)

    report = load(target, prefix, strict=False)
    assert (report.missing, report.unused) == (("bert/pooler/dense/bias",), ("bert/extra/kernel",))
    after = _values(target)
    np.testing.assert_array_equal(after["bert/pooler/dense/kernel"], arrays["bert/pooler/dense/kernel"])
    np.testing.assert_array_equal(after["bert/pooler/dense/bias"], before["bert/pooler/dense/bias"])
    assert "Missing from the checkpoint (1): bert/pooler/dense/bias" in str(report)
    assert "Unused checkpoint weights (1): bert/extra/kernel" in str(report)


def test_shape_mismatch_names_the_variable_and_both_shapes(saved_pretraining):
    _, prefix = saved_pretraining
    with pytest.raises(ValueError) as error:
        load(AlbertModel(_config(vocab_size=120)), prefix)
    assert "shape mismatch" in str(error.value)
    assert ("bert/embeddings/word_embeddings (checkpoint bert/embeddings/word_embeddings: [100, 16], "
            "model: [120, 16])") in str(error.value)


def test_classifier_starts_from_a_pretraining_checkpoint(saved_pretraining):
    model, prefix = saved_pretraining
    classifier = _randomize(AlbertClassifier(_config(), num_labels=3), seed=5)
    head_before = classifier.classification_head.output_weights.numpy()

    report = load(classifier, prefix)

    assert report.missing == ("output_weights", "output_bias")
    assert len(report.unused) == 7 and all(name.startswith("cls/") for name in report.unused)
    assert len(report.loaded) == len(tf1_variables(model.albert))
    assert (report.new_heads, report.other_heads) == (("classification_head",), ("masked_lm_head", "sentence_order_head"))
    np.testing.assert_array_equal(classifier.classification_head.output_weights.numpy(), head_before)
    pretrained = _values(model)
    for name, value in _values(classifier.albert).items():
        np.testing.assert_array_equal(value, pretrained[name], err_msg=name)


def test_classifier_round_trip_uses_top_level_head_names(tmp_path):
    source = _randomize(AlbertClassifier(_config(), num_labels=3), seed=6)
    prefix = save_tf1_checkpoint(source, str(tmp_path / "model.ckpt-best"))
    shapes = dict(tf.train.list_variables(prefix))
    assert (shapes["output_weights"], shapes["output_bias"]) == ([3, 32], [3])

    target = AlbertClassifier(_config(), num_labels=3)
    load(target, prefix)
    inputs = _inputs(_config())
    del inputs["masked_lm_positions"]
    np.testing.assert_array_equal(target(inputs)["logits"].numpy(), source(inputs)["logits"].numpy())


@pytest.mark.parametrize("groups, sharing", [(2, "all"), (1, "none"), (2, "ffn")])
def test_init_from_group0_fills_every_owner_from_group_0(groups, sharing, tmp_path):
    shared = _randomize(AlbertModel(_config(num_hidden_groups=1, inner_group_num=1)), seed=7)
    prefix = save_tf1_checkpoint(shared, str(tmp_path / "shared"))
    target = AlbertModel(_config(num_hidden_groups=groups, inner_group_num=1, sharing=sharing))

    with pytest.raises(CheckpointMismatchError, match="group_1/inner_group_0"):
        load(target, prefix)
    report = load(target, prefix, init_from_group0=True)

    assert (report.missing, report.unused) == ((), ())
    assert report.sources and all("/group_0/" in source for source in report.sources.values())
    checkpoint = _values(shared)
    for name, value in _values(target).items():
        source = re.sub(r"/group_\d+/", "/group_0/", name)
        np.testing.assert_array_equal(value, checkpoint[source], err_msg=name)


def test_init_from_group0_prefers_a_group_the_checkpoint_has(saved_pretraining):
    model, prefix = saved_pretraining
    target = _randomize(AlbertPretrainingModel(_config()), seed=8)
    report = load(target, prefix, init_from_group0=True)
    assert report.sources == {}
    group1 = "bert/encoder/transformer/group_1/inner_group_1/ffn_1/intermediate/dense/kernel"
    np.testing.assert_array_equal(_values(target)[group1], _values(model)[group1])


# --- Our TF2 checkpoints and Keras files: the same loader, the parts the model has. -------------


def _object_checkpoint(model, prefix, **training_state):
    """A checkpoint in the layout this package writes: the model under `model`, plus state."""
    return tf.train.Checkpoint(model=model, **training_state).write(prefix)


def _assert_same(target, source):
    expected = _values(source)
    for name, value in _values(target).items():
        np.testing.assert_array_equal(value, expected[name], err_msg=name)


@pytest.mark.parametrize("make", [AlbertModel, AlbertPretrainingModel, lambda c: AlbertClassifier(c, 3)])
def test_our_checkpoint_round_trips_every_model_with_training_state_skipped(make, tmp_path):
    source = _randomize(make(_config()), seed=9)
    step = tf.Variable(7, dtype=tf.int64)
    prefix = _object_checkpoint(source, str(tmp_path / "ckpt-7"), data_steps=step)
    target = _randomize(make(_config()), seed=10)

    for path in (prefix, str(tmp_path)):
        report = load(target, path)
        assert (report.path, report.format) == (prefix, "TF2 checkpoint")
        assert (report.missing, report.unused, report.new_heads, report.other_heads) == ((), (), (), ())
        assert len(report.loaded) == len(target.weights)
        assert "data_steps/.ATTRIBUTES/VARIABLE_VALUE" not in report.skipped  # suffix dropped
        assert "data_steps" in report.skipped
        _assert_same(target, source)


def test_classifier_and_backbone_take_the_backbone_of_a_pretraining_checkpoint(tmp_path):
    source = _randomize(AlbertPretrainingModel(_config()), seed=11)
    prefix = _object_checkpoint(source, str(tmp_path / "ckpt-1"))
    classifier = _randomize(AlbertClassifier(_config(), num_labels=3), seed=12)
    head_before = classifier.classification_head.output_weights.numpy()

    report = load(classifier, prefix)

    assert report.new_heads == ("classification_head",)
    assert report.other_heads == ("masked_lm_head", "sentence_order_head")
    assert report.missing == ("output_weights", "output_bias")
    assert sorted(report.unused) == sorted([
        "model/masked_lm_head/output_bias", "model/masked_lm_head/transform/_kernel",
        "model/masked_lm_head/transform/bias", "model/masked_lm_head/transform_layer_norm/beta",
        "model/masked_lm_head/transform_layer_norm/gamma", "model/sentence_order_head/output_bias",
        "model/sentence_order_head/output_weights"])
    _assert_same(classifier.albert, source.albert)
    np.testing.assert_array_equal(classifier.classification_head.output_weights.numpy(), head_before)

    backbone = AlbertModel(_config())
    assert load(backbone, prefix).other_heads == ("masked_lm_head", "sentence_order_head")
    _assert_same(backbone, source.albert)


def test_a_model_checkpoint_missing_part_of_the_backbone_is_strict_error(tmp_path):
    source = _randomize(AlbertPretrainingModel(_config(num_hidden_groups=1)), seed=13)
    prefix = _object_checkpoint(source, str(tmp_path / "ckpt-1"))
    target = AlbertPretrainingModel(_config(num_hidden_groups=2))
    with pytest.raises(CheckpointMismatchError, match=r"missing from the checkpoint: .*group_1/inner_group_0"):
        load(target, prefix)
    report = load(target, prefix, init_from_group0=True)
    assert report.missing == () and report.sources


def test_fine_tuning_output_directory_loads_its_best_then_its_latest(tmp_path):
    best = _randomize(AlbertClassifier(_config(), num_labels=2), seed=14)
    latest = _randomize(AlbertClassifier(_config(), num_labels=2), seed=15)
    optimizer_state = {"step": tf.Variable(3)}
    latest_prefix = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=latest, **optimizer_state), str(tmp_path / "checkpoints"), 1).save(3)
    target = AlbertClassifier(_config(), num_labels=2)
    assert load(target, str(tmp_path)).path == latest_prefix
    best_prefix = _object_checkpoint(best, str(tmp_path / "best" / "model"))
    assert load(target, str(tmp_path)).path == best_prefix
    _assert_same(target, best)


def test_object_checkpoint_without_a_model_is_an_error(tmp_path):
    prefix = tf.train.Checkpoint(step=tf.Variable(1)).write(str(tmp_path / "ckpt-1"))
    with pytest.raises(ValueError, match=r"without a `model` object \(it holds \['step'\]\)"):
        load(AlbertModel(_config()), prefix)


@pytest.mark.parametrize("suffix", [".weights.h5", ".keras"])
@pytest.mark.parametrize("make", [AlbertPretrainingModel, lambda c: AlbertClassifier(c, 3), AlbertModel])
def test_keras_files_load_whole_or_the_backbone(make, suffix, tmp_path):
    source = _randomize(make(_config()), seed=16)
    path = str(tmp_path / f"model{suffix}")
    (source.save_weights if suffix == ".weights.h5" else source.save)(path)

    same = make(_config())
    report = load(same, path)
    assert (report.format, report.missing, report.unused) == ("Keras file", (), ())
    _assert_same(same, source)

    classifier = AlbertClassifier(_config(), num_labels=3)
    report = load(classifier, path)
    _assert_same(classifier.albert, getattr(source, "albert", source))
    assert report.missing == (() if isinstance(source, AlbertClassifier) else ("output_weights", "output_bias"))


@pytest.mark.parametrize("model_class, arguments", [
    (AlbertModel, {}), (AlbertPretrainingModel, {}), (AlbertClassifier, {"num_labels": 3}),
    (AlbertQuestionAnswering, {}), (AlbertQuestionAnswering, {"version_2_with_negative": True}),
    (AlbertMultipleChoice, {}),
], ids=["backbone", "pretraining", "classifier", "squad1.1", "squad2.0", "multiple_choice"])
def test_every_model_kind_is_read_whole_from_its_weights_file_by_from_pretrained(model_class, arguments, tmp_path):
    """The checkpoints know all five kinds (through Keras' registry, which names them without an import)."""
    source = _randomize(model_class(_config(), **arguments), seed=21)
    source.save_weights(str(tmp_path / "model.weights.h5"))
    source.config.to_json_file(str(tmp_path / "albert_config.json"))
    again = model_class.from_pretrained(str(tmp_path / "model.weights.h5"), **arguments)
    report = again.load_report
    assert (report.format, report.missing, report.unused) == ("Keras file", (), ())
    assert len(report.loaded) == len(source.weights)
    _assert_same(again, source)


def test_hugging_face_files_are_written_for_the_three_kinds_it_has_a_class_of(tmp_path):
    from albert_tf.checkpoints import save_huggingface_checkpoint

    with pytest.raises(TypeError, match=r"expected one of \['AlbertModel', 'AlbertPretrainingModel', "
                                        r"'AlbertClassifier'\], got AlbertQuestionAnswering"):
        save_huggingface_checkpoint(AlbertQuestionAnswering(_config()), str(tmp_path / "hf"))
    assert not os.path.exists(tmp_path / "hf")


def test_keras_file_of_another_config_names_the_problem(tmp_path):
    path = str(tmp_path / "model.weights.h5")
    AlbertModel(_config()).save_weights(path)
    with pytest.raises(ValueError, match=r"model.weights.h5 does not fit AlbertModel of this config"):
        load(AlbertModel(_config(vocab_size=120)), path)
    with pytest.raises(FileNotFoundError, match=r"absent.keras does not exist"):
        load(AlbertModel(_config()), str(tmp_path / "absent.keras"))


def _built(model):
    model(model.example_inputs())
    return model


# The five model types every runner resumes: pretraining, GLUE classifier, backbone (export_encoder),
# SQuAD (v1.1 and v2.0 heads) and RACE.
EVERY_MODEL = {
    "pretraining": AlbertPretrainingModel,
    "classifier": lambda config: AlbertClassifier(config, 3),
    "backbone": AlbertModel,
    "squad_v1": lambda config: _built(AlbertQuestionAnswering(config)),
    "squad_v2": lambda config: _built(AlbertQuestionAnswering(config, version_2_with_negative=True)),
    "race": lambda config: _built(AlbertMultipleChoice(config, num_choices=4)),
}


@pytest.mark.parametrize("kind", sorted(EVERY_MODEL))
def test_every_model_type_is_named_loaded_and_checked_on_resume(kind, tmp_path):
    make = EVERY_MODEL[kind]
    source = _randomize(make(_config()), seed=11)
    assert len(tf1_variables(source)) == len(source.weights)  # every weight, head included, has a TF1 name
    prefix = _object_checkpoint(source, str(tmp_path / "ckpt-1"))
    target = make(_config())
    assert mismatches(prefix, target) is None
    report = load(target, prefix)
    assert (len(report.loaded), report.missing, report.unused) == (len(target.weights), (), ())
    _assert_same(target, source)

    other = make(_config(intermediate_size=48))
    assert "ffn_1/intermediate/dense/kernel: [32, 64] stored, [32, 48] expected" in mismatches(prefix, other)


def test_resume_check_compares_the_squad_head(tmp_path):
    prefix = _object_checkpoint(EVERY_MODEL["squad_v1"](_config()), str(tmp_path / "ckpt-1"))
    assert "start_logits/dense/kernel: missing" in mismatches(prefix, EVERY_MODEL["squad_v2"](_config()))


@pytest.mark.parametrize("kind", ["squad_v1", "race"])
def test_a_compiled_models_output_with_its_optimizer_starts_the_other_runners(kind, tmp_path):
    """SQuAD and RACE `best/model` hold the compiled model's optimizer (its slots under
    `model/optimizer/...`); another runner's --init_checkpoint skips them and takes the backbone."""
    import keras  # pylint: disable=g-import-not-at-top

    source = _randomize(EVERY_MODEL[kind](_config()), seed=12)
    source.compile(optimizer=keras.optimizers.Adam())
    source.optimizer.build(source.trainable_variables)  # the slots a trained run holds
    prefix = tf.train.Checkpoint(model=source).write(str(tmp_path / "best" / "model"))
    assert any("optimizer" in name for name, _ in tf.train.list_variables(prefix))

    target = EVERY_MODEL["squad_v1" if kind == "race" else "classifier"](_config())
    report = load(target, str(tmp_path))
    assert report.unexpected() == ([], []) and len(report.new_heads) == len(report.other_heads) == 1
    assert any("optimizer" in name for name in report.skipped)
    np.testing.assert_array_equal(target.albert.pooler.kernel.numpy(), source.albert.pooler.kernel.numpy())


def _head_names(model, head):
    return {name for name in tf1_variables(model) if any(fnmatch.fnmatchcase(name, p) for p in HEAD_NAMES[head])}


@pytest.mark.parametrize("source_make, target_make, head", [
    (lambda c: AlbertClassifier(c, 3), lambda c: AlbertClassifier(c, 2), "classification_head"),
    (EVERY_MODEL["squad_v1"], EVERY_MODEL["squad_v2"], "qa_head"),
])
def test_a_head_of_other_shapes_or_names_starts_fresh_only_when_asked(source_make, target_make, head, tmp_path):
    source = _randomize(source_make(_config()), seed=21)
    prefix = _object_checkpoint(source, str(tmp_path / "ckpt-1"))
    target = _randomize(target_make(_config()), seed=22)
    before = _values(target)
    with pytest.raises(ValueError):
        load(target, prefix)
    report = load(target, prefix, heads_that_differ="fresh")
    assert report.new_heads == (head,) and report.other_heads == (head,)
    assert report.unexpected() == ([], [])
    head_names = _head_names(target, head)
    assert head_names and set(report.loaded) == set(tf1_variables(target)) - head_names
    expected = _values(source)
    for name, value in _values(target).items():
        np.testing.assert_array_equal(value, before[name] if name in head_names else expected[name], err_msg=name)


def test_a_head_that_fits_whole_is_loaded_with_heads_that_differ_fresh(tmp_path):
    source = _randomize(AlbertClassifier(_config(), 2), seed=23)
    target = _randomize(AlbertClassifier(_config(), 2), seed=24)
    report = load(target, _object_checkpoint(source, str(tmp_path / "ckpt-1")), heads_that_differ="fresh")
    assert (report.missing, report.new_heads, report.other_heads) == ((), (), ())
    _assert_same(target, source)


def test_an_inspected_path_is_not_inspected_again(tmp_path, monkeypatch):
    from albert_tf.checkpoints import formats, inspect

    source = _randomize(AlbertClassifier(_config(), 2), seed=25)
    _object_checkpoint(source, str(tmp_path / "ckpt-1"))
    (tmp_path / "albert_config.json").write_text(_config().to_json_string())
    inspected = inspect(str(tmp_path))
    assert (inspected.format, inspected.config_file) == (None, str(tmp_path / "albert_config.json"))
    monkeypatch.setattr(formats.huggingface, "is_huggingface_dir", lambda path: pytest.fail("inspected again"))
    assert formats.read_config(inspected).to_dict() == _config().to_dict()
    target = AlbertClassifier(_config(), 2)
    assert load(target, inspected).format == "TF2 checkpoint"
    _assert_same(target, source)
