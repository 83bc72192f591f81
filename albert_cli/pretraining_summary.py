"""What `run_pretraining.py` prints at the end: a few lines a person reads (the step reached, the
held-out metrics before, at the end and at their best, where the files are). The whole summary,
with every record and its Unix times, is `pretraining_summary.json`, for programs."""

import os


def metrics_text(values):
    """`loss 2.3456, mlm_acc 0.1234, sop_acc 0.5678` of a training or held-out record."""
    return (f"loss {values['loss']:.4f}, mlm_acc {values['masked_lm_accuracy']:.4f}, "
            f"sop_acc {values['sentence_order_accuracy']:.4f}")


def summary_lines(summary, output_dir, summary_file):
    """The lines to print for `summary` (as `write_summary` wrote it to `output_dir/summary_file`)."""
    # Here, not at the top: they import TensorFlow, which the command imports after quieting it.
    from albert_tf.pretraining.metrics_log import METRICS_FILE  # pylint: disable=g-import-not-at-top
    from albert_tf.training.tensorboard_log import TENSORBOARD_DIR  # pylint: disable=g-import-not-at-top

    rate = summary.get("examples_per_second")
    lines = [f"pretrained to step {summary['final_step']}" + (f", {rate:.1f} examples/s" if rate else "")
             + (f"; last checkpoint {summary['checkpoint']}" if summary.get("checkpoint") else "")]
    if "train_first" in summary:
        first, last = summary["train_first"], summary["train_last"]
        lines.append(f"training: step {first['step']} {metrics_text(first)}; step {last['step']} {metrics_text(last)}")
    if "eval" in summary:
        held_out = [summary["eval_initial"]] if "eval_initial" in summary else []
        held_out.append(summary["eval"])
        lines.append("held-out: " + "; ".join(f"step {values['step']} {metrics_text(values)}" for values in held_out))
    if "eval_best" in summary:
        lines.append(f"lowest held-out loss: step {summary['eval_best']['step']} {metrics_text(summary['eval_best'])}")
    lines.append(f"summary (JSON): {os.path.join(output_dir, summary_file)}; per-step records: "
                 f"{os.path.join(output_dir, METRICS_FILE)}; TensorBoard: {os.path.join(output_dir, TENSORBOARD_DIR)}")
    return lines
