"""GLUE tasks, TSV and TFDS readers, and feature building: the original's semantics."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertClassifier, AlbertConfig
from albert_tf.glue import features as glue_features
from albert_tf.glue.examples import GlueExample, read_examples
from albert_tf.glue.recipes import paper_recipe
from albert_tf.glue.tasks import AX, TASKS, get_task
from albert_tf.text.tokenization import AlbertTokenizer
from glue_test_data import GLUE_DIR, SPM_MODEL, TINY_CONFIG, build_tfds_glue, write_glue_file


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL)


def test_task_names_are_case_and_dash_insensitive():
    assert get_task("sst-2") is get_task("SST2") is TASKS["SST-2"]
    assert get_task("sts_b").is_regression and get_task("sts-b").num_labels == 1
    assert get_task("MNLI").labels == ("contradiction", "entailment", "neutral")


def test_unknown_task_lists_the_known_ones():
    with pytest.raises(ValueError, match="known tasks: CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE, WNLI"):
        get_task("squad")


def test_every_task_with_a_paper_recipe_except_none():
    assert set(TASKS) == {"CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE", "WNLI"}
    assert paper_recipe(TASKS["MRPC"])["learning_rate"] == 2e-5
    assert paper_recipe(TASKS["SST-2"])["train_step"] == 20935


@pytest.mark.parametrize(
    "task_name, split, count, first",
    [
        ("SST-2", "train", 1000, GlueExample("train-2", "hide new secretions from the parental units ", None, "0")),
        ("SST-2", "test", 200, GlueExample("0", "uneasy mishmash of styles and genres .", None, None)),
        ("CoLA", "dev", 1043, GlueExample("dev-1", "The sailors rode the breeze clear of the rocks.", None, "1")),
        ("MRPC", "dev", 408, None),
        ("STS-B", "train", 1000, GlueExample("train-2", "A plane is taking off.", "An air plane is taking off.", 5.0)),
    ],
)
def test_shipped_tsv_files_read_as_the_original(task_name, split, count, first):
    example_set = read_examples(get_task(task_name), split, data_dir=GLUE_DIR)
    assert len(example_set.examples) == count and example_set.num_skipped == 0
    if first is not None:
        assert example_set.examples[0] == first
    if task_name == "MRPC":
        assert example_set.examples[0].label == "1" and example_set.examples[0].text_b.startswith('" The food')


def test_malformed_row_names_file_and_line(tmp_path):
    write_glue_file(tmp_path, "SST-2", "dev.tsv", ["sentence\tlabel", "good\t1", "no label column"])
    with pytest.raises(ValueError, match=r"SST-2/dev.tsv:3: expected at least 2 tab-separated columns, got 1"):
        read_examples(get_task("sst-2"), "dev", data_dir=str(tmp_path))
    write_glue_file(tmp_path, "RTE", "dev.tsv", ["index\ts1\ts2\tlabel", "0\ta\tb\tmaybe"])
    with pytest.raises(ValueError, match=r"RTE/dev.tsv:2: expected a label in \['entailment', 'not_entailment'\]"):
        read_examples(get_task("rte"), "dev", data_dir=str(tmp_path))


def test_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="QNLI/train.tsv does not exist"):
        read_examples(get_task("qnli"), "train", data_dir=str(tmp_path))


def test_qqp_malformed_rows_are_skipped_and_counted(tmp_path):
    write_glue_file(tmp_path, "QQP", "train.tsv", [
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate",
        "0\t1\t2\tHow old?\tWhat age?\t1",
        "1\t3\t4\tbroken row",
        "2\t5\t6\tWhy?\tHow?\t0",
    ])
    example_set = read_examples(get_task("qqp"), "train", data_dir=str(tmp_path))
    assert [e.label for e in example_set.examples] == ["1", "0"] and example_set.num_skipped == 1


def test_mnli_and_ax_files(tmp_path):
    header = "\t".join(["index", "promptID", "pairID", "genre", "s1b", "s2b", "s1p", "s2p", "sentence1",
                        "sentence2", "label1", "gold_label"])
    row = "\t".join(["0", "1", "1e", "fiction", "x", "x", "x", "x", "A man.", "A person.", "entailment", "entailment"])
    write_glue_file(tmp_path, "MNLI", "dev_mismatched.tsv", [header, row])
    write_glue_file(tmp_path, "diagnostic", "diagnostic.tsv", ["index\tsentence1\tsentence2", "7\tA\tB"])
    mismatched = read_examples(get_task("mnli"), "dev_mismatched", data_dir=str(tmp_path)).examples
    assert mismatched == [GlueExample("dev_mismatched-2", "A man.", "A person.", "entailment")]
    assert read_examples(AX, "test", data_dir=str(tmp_path)).examples == [GlueExample("7", "A", "B", None)]


def test_tfds_source_matches_the_tsv_source(tmp_path):
    tsv = read_examples(get_task("sst-2"), "dev", data_dir=GLUE_DIR).examples[:20]
    rows = [{"idx": i, "sentence": e.text_a, "label": int(e.label)} for i, e in enumerate(tsv)]
    build_tfds_glue(str(tmp_path), "sst2", {"validation": rows, "train": rows})
    from_tfds = read_examples(get_task("sst-2"), "dev", tfds_data_dir=str(tmp_path)).examples
    assert [(e.text_a, e.label) for e in from_tfds] == [(e.text_a, e.label) for e in tsv]


def test_tfds_mnli_labels_are_mapped_by_name(tmp_path):
    # TFDS orders MNLI's classes entailment, neutral, contradiction; the original: contradiction first.
    rows = [{"idx": i, "premise": "p", "hypothesis": "h", "label": i} for i in range(3)]
    build_tfds_glue(str(tmp_path), "mnli", {"validation_matched": rows})
    labels = [e.label for e in read_examples(get_task("mnli"), "dev", tfds_data_dir=str(tmp_path)).examples]
    assert labels == ["entailment", "neutral", "contradiction"]


def test_tfds_missing_dataset_is_a_usage_error(tmp_path):
    with pytest.raises(ValueError, match="^tfds_data_dir: cannot load glue/cola"):
        read_examples(get_task("cola"), "train", tfds_data_dir=str(tmp_path))


def test_features_are_cls_a_sep_b_sep_with_the_original_truncation(tokenizer):
    example = GlueExample("x", "one two three four five six seven", "eight nine", "1")
    ids, segments = glue_features.example_ids(example, tokenizer, max_seq_length=9)
    a, b = tokenizer.encode(example.text_a), tokenizer.encode(example.text_b)
    assert ids == [tokenizer.cls_id] + a[:4] + [tokenizer.sep_id] + b + [tokenizer.sep_id]
    assert segments == [0] * 6 + [1] * 3
    single, single_segments = glue_features.example_ids(example._replace(text_b=None), tokenizer, 5)
    assert single == [tokenizer.cls_id] + a[:3] + [tokenizer.sep_id] and single_segments == [0] * 5


def _feature_file(tmp_path, task, tokenizer, examples):
    path = str(tmp_path / f"{task.name}.tf_record")
    glue_features.write_features(task, examples, tokenizer, 128, path)
    return path


def test_dynamic_padding_gives_the_same_logits_as_fixed_padding(tmp_path, tokenizer):
    task = get_task("mrpc")
    examples = read_examples(task, "dev", data_dir=GLUE_DIR).examples[:12]
    path = _feature_file(tmp_path, task, tokenizer, examples)
    model = AlbertClassifier(AlbertConfig.from_json_file(TINY_CONFIG), 2)
    outputs = {}
    for padding in glue_features.PADDING_MODES:
        dataset = glue_features.make_dataset(task, path, 5, 128, padding=padding)
        lengths = [features["input_word_ids"].shape[1] for features, _ in dataset]
        logits = [model(features)["logits"].numpy() for features, _ in dataset]
        outputs[padding] = np.concatenate(logits)
        if padding == "dynamic":
            assert max(lengths) < 128 and all(length % glue_features.LENGTH_MULTIPLE == 0 for length in lengths)
    np.testing.assert_allclose(outputs["dynamic"], outputs["fixed"], atol=1e-5)


def test_bucketed_training_batches_group_rows_of_similar_length(tmp_path, tokenizer):
    task = get_task("sst-2")
    examples = read_examples(task, "train", data_dir=GLUE_DIR).examples[:200]
    path = _feature_file(tmp_path, task, tokenizer, examples)
    lengths = {"bucketed": [], "dynamic": []}
    for padding in lengths:
        dataset = glue_features.make_dataset(task, path, 8, 128, padding=padding, training=True, seed=3)
        for features, labels in dataset.take(40):
            assert features["input_word_ids"].shape[0] == 8 and labels.shape == (8,)
            rows = features["input_mask"].numpy().sum(1)
            width = features["input_word_ids"].shape[1]
            assert width % glue_features.LENGTH_MULTIPLE == 0 and width >= rows.max()
            if padding == "bucketed":  # one band of BUCKET_WIDTH tokens per batch
                assert (rows.max() - 1) // glue_features.BUCKET_WIDTH == (rows.min() - 1) // glue_features.BUCKET_WIDTH
            lengths[padding].append(width)
    assert sum(lengths["bucketed"]) < 0.8 * sum(lengths["dynamic"])  # less padding than per-batch longest
    # Evaluation keeps the file's order: bucketed pads it as dynamic does.
    ordered = glue_features.make_dataset(task, path, 8, 128, padding="bucketed")
    got = np.concatenate([labels.numpy() for _, labels in ordered])
    np.testing.assert_array_equal(got, [glue_features.label_value(task, e.label) for e in examples])


def test_regression_labels_and_cache_key(tmp_path, tokenizer):
    task = get_task("sts-b")
    example_set = read_examples(task, "dev", data_dir=GLUE_DIR)
    example_set = example_set._replace(examples=example_set.examples[:4])
    path = glue_features.cached_features(task, "dev", example_set, tokenizer, 32, str(tmp_path))
    assert path == glue_features.cached_features(task, "dev", example_set, tokenizer, 32, str(tmp_path))
    assert path != glue_features.cached_features(task, "dev", example_set, tokenizer, 48, str(tmp_path))
    _, labels = next(iter(glue_features.make_dataset(task, path, 4, 32)))
    np.testing.assert_allclose(labels.numpy()[:, 0], [e.label for e in example_set.examples])
    assert labels.dtype == tf.float32
