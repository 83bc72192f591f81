"""GLUE fine-tuning: tasks, readers (TSV and TFDS), features, metrics, training and submissions."""

from albert_tf.glue.tasks import AX, TASKS, GlueTask, get_task

__all__ = ["AX", "TASKS", "GlueTask", "get_task"]
