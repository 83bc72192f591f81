"""The lines `run_pretraining.py` prints at its end, from a summary as `write_summary` writes it."""

from albert_cli.pretraining_summary import summary_lines


def _record(step, loss, split="eval"):
    return {"step": step, "split": split, "time": 1796162370.594, "loss": loss, "masked_lm_accuracy": 0.25,
            "masked_lm_loss": loss - 0.5, "sentence_order_accuracy": 0.5, "sentence_order_loss": 0.5}


SUMMARY = {"strategy": "OneDeviceStrategy", "replicas": 1, "train_files": ["a.tfrecord"], "eval_files": ["b.tfrecord"],
           "eval_initial": _record(0, 11.0), "eval": _record(60, 7.5), "step": 60, "stopped_by": None,
           "examples_per_second": 126.25, "checkpoint": "out/ckpt-60", "train_first": _record(10, 10.5, "train"),
           "train_last": _record(60, 7.25, "train"), "eval_best": _record(40, 7.0), "best_eval_step": 40,
           "final_step": 60}


def test_the_summary_is_a_few_lines_without_raw_times():
    lines = summary_lines(SUMMARY, "out", "pretraining_summary.json")
    assert lines == [
        "pretrained to step 60, 126.2 examples/s; last checkpoint out/ckpt-60",
        "training: step 10 loss 10.5000, mlm_acc 0.2500, sop_acc 0.5000; step 60 loss 7.2500, mlm_acc 0.2500, "
        "sop_acc 0.5000",
        "held-out: step 0 loss 11.0000, mlm_acc 0.2500, sop_acc 0.5000; step 60 loss 7.5000, mlm_acc 0.2500, "
        "sop_acc 0.5000",
        "lowest held-out loss: step 40 loss 7.0000, mlm_acc 0.2500, sop_acc 0.5000",
        "summary (JSON): out/pretraining_summary.json; per-step records: out/metrics.jsonl; TensorBoard: out/logs",
    ]


def test_a_run_without_evaluation_says_where_its_files_are():
    summary = {key: value for key, value in SUMMARY.items() if not key.startswith(("eval", "best"))}
    lines = summary_lines(summary, "out", "pretraining_summary.json")
    assert len(lines) == 3 and not [line for line in lines if "held-out" in line]
    assert lines[-1].startswith("summary (JSON): out/pretraining_summary.json")
