"""GLUE from TensorFlow Datasets (`glue/<config>`, already prepared under `tfds_data_dir`) -> `GlueExample`s.

TFDS numbers the classes itself; labels are mapped back to the original's label names (by name
where they coincide, as for MNLI whose TFDS order differs; by index otherwise, e.g. SST-2's
"negative"/"positive" are "0"/"1"), so logits mean the same whatever the source.
"""

import tensorflow_datasets as tfds

from albert_tf.error_text import SettingError, error_line
from albert_tf.glue.example_types import ExampleSet, GlueExample


def read_tfds_split(task, split, tfds_data_dir):
    name = f"glue/{task.tfds_config}"
    tfds_split = task.tfds_split(split)
    try:
        dataset, info = tfds.load(
            name, split=tfds_split, data_dir=tfds_data_dir, download=False, with_info=True
        )
    except (AssertionError, ValueError, OSError, tfds.core.registered.DatasetNotFoundError) as error:
        raise SettingError("{tfds_data_dir}: cannot load {name} split {split} from {location}: {detail}",
                           name=name, split=tfds_split, location=tfds_data_dir, detail=error_line(error)) from None
    to_label = _label_mapper(task, info)
    examples = []
    for row in tfds.as_numpy(dataset):
        texts = [row[key].decode("utf-8") for key in task.tfds_text_keys]
        examples.append(
            GlueExample(
                guid=str(int(row["idx"])),
                text_a=texts[0],
                text_b=texts[1] if len(texts) > 1 else None,
                label=None if split.startswith("test") else to_label(row["label"]),
            )
        )
    return ExampleSet(examples, f"{tfds_data_dir}/{name}:{tfds_split}", 0)


def _label_mapper(task, info):
    if task.is_regression:
        return float
    names = info.features["label"].names
    if set(names) == set(task.labels):
        return lambda index: names[int(index)]
    return lambda index: task.labels[int(index)]
