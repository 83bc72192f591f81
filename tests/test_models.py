"""AlbertModel, AlbertPretrainingModel and AlbertClassifier: sizes, outputs, precision, saving."""

import keras
import numpy as np
import pytest

from albert_tf import AlbertClassifier, AlbertConfig, AlbertModel, AlbertPretrainingModel
from albert_tf.models import load_model
from model_test_data import backbone_inputs, batch_for, tiny


@pytest.mark.parametrize(
    "size, backbone, pretraining",
    [
        ("base", 11_683_584, 11_813_810),
        ("large", 17_683_968, 17_847_474),
        ("xlarge", 58_724_864, 59_021_490),
        ("xxlarge", 222_595_584, 223_158_450),
    ],
)
def test_exact_parameter_counts(size, backbone, pretraining):
    config = AlbertConfig.from_json_file(f"configs/albert_{size}.json")
    model = AlbertPretrainingModel(config)
    assert model.albert.count_params() == backbone
    assert model.count_params() == pretraining
    # 25 backbone + 5 MLM + 2 SOP variables: the decoder is the tied word-embedding table.
    assert len(model.weights) == 32


@pytest.mark.parametrize(
    "sharing, count", [("all", 11_683_584), ("ffn", 37_686_528), ("attention", 63_647_232),
                       ("none", 89_650_176)]
)
def test_sharing_mode_parameter_counts_for_base(sharing, count):
    config = AlbertConfig.from_json_file("configs/albert_base.json").replace(sharing=sharing)
    assert AlbertModel(config).count_params() == count


def test_outputs_shapes_and_dtypes():
    config = tiny(num_hidden_groups=2, inner_group_num=2)
    inputs = batch_for(config)
    outputs = AlbertPretrainingModel(config)(inputs)
    assert outputs["sequence_output"].shape == (2, 12, 128)
    assert outputs["pooled_output"].shape == (2, 128)
    assert outputs["mlm_logits"].shape == (2, 3, 30000)
    assert outputs["sop_logits"].shape == (2, 2)
    backbone = AlbertModel(config)(backbone_inputs(inputs))
    assert len(backbone["encoder_outputs"]) == 4 * 2
    np.testing.assert_array_equal(backbone["encoder_outputs"][-1], backbone["sequence_output"])


def test_any_sequence_length_up_to_max_positions():
    config = tiny(max_position_embeddings=32)
    model = AlbertModel(config)
    for seq in (1, 7, 32):
        assert model(backbone_inputs(batch_for(config, seq=seq, predictions=1)))["sequence_output"].shape[1] == seq
    with pytest.raises(ValueError, match="exceeds max_position_embeddings"):
        model(backbone_inputs(batch_for(config, seq=33)))


@pytest.mark.parametrize(
    "changes",
    [{}, {"num_hidden_layers": 4, "num_hidden_groups": 2, "inner_group_num": 2}, {"num_hidden_layers": 1}],
)
def test_heads_read_the_last_block_at_their_positions_only_and_get_the_same_numbers(changes):
    """The heads' last block runs at [CLS] + masked positions only (`AlbertModel.encode`); its
    rows must equal the full backbone's, so every head output equals the one computed from it."""
    config = tiny(**changes)
    model = AlbertPretrainingModel(config)
    inputs = batch_for(config, seq=16, predictions=5)
    outputs = model(inputs)
    full = model.albert(backbone_inputs(inputs))
    np.testing.assert_allclose(outputs["sequence_output"], full["sequence_output"], atol=1e-6)
    np.testing.assert_allclose(outputs["pooled_output"], full["pooled_output"], atol=2e-6)
    # The pooler reads [CLS] of the last block's apart run; the full block's row gives the same.
    np.testing.assert_allclose(full["pooled_output"], model.albert.pooler(full["sequence_output"][:, 0]), atol=2e-6)
    from_full_rows = model.masked_lm_head(full["sequence_output"], inputs["masked_lm_positions"])
    np.testing.assert_allclose(outputs["mlm_logits"], from_full_rows, atol=2e-5)
    np.testing.assert_allclose(outputs["sop_logits"], model.sentence_order_head(full["pooled_output"]), atol=2e-6)

    classifier = AlbertClassifier(config, num_labels=3)
    pooled = classifier(backbone_inputs(inputs))["pooled_output"]
    np.testing.assert_allclose(pooled, classifier.albert(backbone_inputs(inputs))["pooled_output"], atol=2e-6)


def test_masked_lm_decoder_is_tied_to_word_embeddings():
    config = tiny()
    model = AlbertPretrainingModel(config)
    inputs = batch_for(config)
    before = np.asarray(model(inputs)["mlm_logits"])
    table = model.albert.embeddings.word_embeddings
    # Changing one vocabulary row changes that logit everywhere (and, through the lookup, more).
    # The head ends in a LayerNorm whose output sums to zero, so a constant shift of the row
    # would leave the logit unchanged: shift it along a non-constant direction.
    row = 12345
    values = np.asarray(table).copy()
    values[row] += np.linspace(-1.0, 1.0, values.shape[1], dtype=values.dtype)
    table.assign(values)
    after = np.asarray(model(inputs)["mlm_logits"])
    assert not np.allclose(before[..., row], after[..., row])
    own = sorted(tuple(w.shape) for w in model.masked_lm_head.weights if w.path.startswith("masked_lm_head"))
    assert own == [(64,), (64,), (64,), (128, 64), (30000,)]  # no [V, E] decoder of its own


def test_classifier_heads():
    config = tiny()
    inputs = backbone_inputs(batch_for(config))
    assert AlbertClassifier(config, num_labels=3)(inputs)["logits"].shape == (2, 3)
    regression = AlbertClassifier(config, num_labels=1)
    assert regression(inputs)["logits"].shape == (2, 1)
    assert regression.classification_head.output_weights.shape == (1, 128)  # original [labels, H]
    assert regression.count_params() == AlbertModel(config).count_params() + 128 + 1


def test_dropout_only_in_training():
    config = tiny(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    model = AlbertClassifier(config, num_labels=2)
    inputs = backbone_inputs(batch_for(config))
    np.testing.assert_array_equal(model(inputs)["logits"], model(inputs)["logits"])
    assert not np.allclose(model(inputs, training=True)["logits"], model(inputs)["logits"])


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_keeps_norms_softmax_and_logits_in_float32(policy):
    config = tiny()
    inputs = batch_for(config)
    reference = AlbertPretrainingModel(config)
    model = AlbertPretrainingModel(config, dtype=policy)
    model.set_weights(reference.get_weights())
    outputs, expected = model(inputs), reference(inputs)
    assert {w.dtype for w in model.weights} == {"float32"}  # master weights
    assert model.albert.encoder.attention_layers["group_0_inner_group_0"].query.compute_dtype == policy[6:]
    for layer_norm in (model.albert.embeddings.layer_norm, model.masked_lm_head.transform_layer_norm):
        assert layer_norm.compute_dtype == "float32"
    for name in ("sequence_output", "mlm_logits", "sop_logits"):
        assert outputs[name].dtype == "float32"
    tolerance = 0.05 if policy == "mixed_bfloat16" else 0.01
    np.testing.assert_allclose(outputs["mlm_logits"], expected["mlm_logits"], atol=tolerance)


@pytest.mark.parametrize("policy, kernels", [(None, "reference"), ("mixed_bfloat16", "cpu")])
@pytest.mark.parametrize("kind", ["backbone", "pretraining", "classifier"])
def test_keras_save_load_round_trip_is_exact(tmp_path, kind, policy, kernels):
    config = tiny(num_hidden_groups=2, inner_group_num=2, sharing="ffn")
    inputs = batch_for(config)
    if kind == "backbone":
        model, inputs = AlbertModel(config, dtype=policy, kernels=kernels), backbone_inputs(inputs)
    elif kind == "pretraining":
        model = AlbertPretrainingModel(config, dtype=policy, kernels=kernels)
    else:
        model = AlbertClassifier(config, num_labels=3, dtype=policy, kernels=kernels)
        inputs = backbone_inputs(inputs)
    path = str(tmp_path / "model.keras")
    model.save(path)
    restored = load_model(path, kernels=kernels)
    assert type(restored) is type(model) and restored.config == config
    assert restored.get_config() == model.get_config() and restored.kernels == kernels
    first, second = model(inputs), restored(inputs)
    for name in ("sequence_output", "mlm_logits", "sop_logits", "logits", "pooled_output"):
        if name in first:
            np.testing.assert_array_equal(first[name], second[name])


def test_a_keras_file_holds_no_kernel_set_and_loads_with_any(tmp_path):
    import json
    import zipfile

    config = tiny()
    model = AlbertClassifier(config, num_labels=3, kernels="cpu")
    path = str(tmp_path / "model.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        saved = json.loads(archive.read("config.json"))
    assert "kernels" not in json.dumps(saved)  # the model's config and its layers'
    inputs = backbone_inputs(batch_for(config))
    for name in ("reference", "cpu_inference"):
        restored = load_model(path, kernels=name)
        assert restored.kernels == name == restored.kernel_set.name
        np.testing.assert_allclose(restored(inputs)["logits"], model(inputs)["logits"], atol=1e-5)
    assert keras.models.load_model(path).kernels == "reference"  # plain Keras: the reference set


def test_a_keras_file_that_recorded_its_kernel_set_still_loads(tmp_path):
    import json
    import zipfile

    model = AlbertModel(tiny(), kernels="cpu")
    path, old = str(tmp_path / "model.keras"), str(tmp_path / "old.keras")
    model.save(path)
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(old, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "config.json":  # as files saved before the set left the config
                saved = json.loads(data)
                saved["config"]["kernels"] = "cpu"
                data = json.dumps(saved).encode()
            target.writestr(item, data)
    assert load_model(old, kernels="cpu_inference").kernels == "cpu_inference"
    assert load_model(old).kernels == "reference"


def test_tf_train_checkpoint_holds_every_weight(tmp_path):
    import tensorflow as tf

    config = tiny(num_hidden_groups=2, inner_group_num=2, sharing="attention")
    model = AlbertPretrainingModel(config)
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    saved = [name for name, _ in tf.train.list_variables(path) if name.startswith("model/")]
    assert len(saved) == len(model.weights)  # the tied table once, every encoder sub-layer too
    restored = AlbertPretrainingModel(config)
    tf.train.Checkpoint(model=restored).restore(path).assert_existing_objects_matched()
    for ours, theirs in zip(model.weights, restored.weights):
        np.testing.assert_array_equal(ours, theirs)


def test_task_models_call_their_backbone_as_one_layer_with_its_named_inputs():
    from albert_tf.models import AlbertMultipleChoice, AlbertQuestionAnswering

    config = tiny()
    backbone = AlbertModel(config, name="albert")
    assert sorted(backbone.input) == ["input_mask", "input_type_ids", "input_word_ids", "masked_lm_positions"]
    models = {
        "classifier": AlbertClassifier(num_labels=3, backbone=backbone),
        "pretraining": AlbertPretrainingModel(backbone=backbone),
        "multiple_choice": AlbertMultipleChoice(num_choices=2, backbone=backbone),
        "squad_v1": AlbertQuestionAnswering(backbone=backbone),
        "squad_v2": AlbertQuestionAnswering(backbone=backbone, version_2_with_negative=True),
    }
    assert sorted(models["squad_v2"].input) == ["input_mask", "input_type_ids", "input_word_ids", "p_mask",
                                                "start_positions"]
    for kind, model in models.items():
        layers = [layer.name for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]
        assert model.get_layer("albert") is backbone, kind
        assert not {"embeddings", "encoder", "pooler"} & set(layers), (kind, layers)  # only inside the backbone
    # The masked rows reach the heads through the backbone's own call and named output.
    inputs = batch_for(config, seq=16, predictions=4)
    rows = backbone(inputs)["masked_sequence_output"]
    assert rows.shape == (2, 4, 128) and backbone(backbone_inputs(inputs))["masked_sequence_output"].shape == (2, 0, 128)
    np.testing.assert_allclose(models["pretraining"](inputs)["mlm_logits"], models["pretraining"].masked_lm_head(rows),
                               atol=1e-5)


def test_a_pretraining_step_never_computes_the_full_last_block():
    """The heads read the last block at [CLS] and the masked positions only, from the backbone's
    `pooled_output` and `masked_sequence_output`: a traced call that returns only their logits
    depends on no op of the last block over every position (TensorFlow prunes them)."""
    import tensorflow as tf

    from glue_test_data import load_bench_script

    live_ops = load_bench_script("bench_model").live_ops
    config = tiny(num_hidden_layers=2)
    model = AlbertPretrainingModel(config)
    inputs = {k: tf.constant(v) for k, v in batch_for(config, seq=16, predictions=3).items()}

    def ffn_ops_over_every_position(*names):
        def call(x):
            outputs = model(x)
            return [outputs[name] for name in names]

        graph = tf.function(call).get_concrete_function(inputs).graph
        return [op for op in live_ops(graph)
                if op.outputs and op.outputs[0].shape.as_list()[-2:] == [16, config.intermediate_size]]

    full = ffn_ops_over_every_position("sequence_output")
    assert full and len(ffn_ops_over_every_position("mlm_logits", "sop_logits")) == len(full) // 2


def test_task_models_take_a_backbone_and_call_it():
    config = tiny()
    backbone = AlbertModel(config, dtype="mixed_bfloat16", kernels="cpu", name="albert")
    classifier = AlbertClassifier(num_labels=3, backbone=backbone)
    pretraining = AlbertPretrainingModel(backbone=backbone)
    assert classifier.albert is backbone and pretraining.albert is backbone
    assert classifier.kernels == pretraining.kernels == "cpu"
    assert classifier.get_config()["dtype"] == "mixed_bfloat16"
    # The classifier calls the backbone: it is one node of the classifier's graph.
    assert backbone in classifier.layers
    # The same weights, so the same pooled output either way.
    inputs = backbone_inputs(batch_for(config))
    np.testing.assert_allclose(classifier(inputs)["pooled_output"], backbone(inputs)["pooled_output"], atol=1e-6)
    with pytest.raises(ValueError, match="either `config`"):
        AlbertClassifier(num_labels=2)
    with pytest.raises(ValueError, match="differs from `backbone.config`"):
        AlbertPretrainingModel(tiny(num_hidden_layers=2), backbone=backbone)
    with pytest.raises(ValueError, match="unknown kernels 'gpu'"):
        AlbertModel(config, kernels="gpu")


def test_every_model_kind_is_exported_and_every_head_is_a_layer():
    import albert_tf
    from albert_tf import layers, models
    from albert_tf.layers.layer_norm import LAYER_NORM_EPSILON

    for name in ("AlbertModel", "AlbertPretrainingModel", "AlbertClassifier", "AlbertMultipleChoice",
                 "AlbertQuestionAnswering"):
        assert getattr(albert_tf, name) is getattr(models, name) and name in albert_tf.__all__
    head = layers.AnswerabilitySpanHead(8)
    assert head.end_logits_norm.epsilon == LAYER_NORM_EPSILON and head.end_logits_norm.dtype_policy.name == "float32"
    assert layers.SpanLogitsHead.from_config(layers.SpanLogitsHead(8).get_config()).hidden_size == 8
