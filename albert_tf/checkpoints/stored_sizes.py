"""A config's sizes checked against the shapes a checkpoint stores, before any model is built.

A config that lies about sizes (`hidden_size` 100000 beside 64-wide weights) would otherwise build
tens of gigabytes of variables first, an out-of-memory crash, and be refused only when the weights
are matched. The shapes are read from indexes and headers (a TF checkpoint's index, safetensors'
header, the HDF5 tree), never the weights; every size below is the length of some stored axis
(the V×E table, E→H, the H×H attention kernels, H→I) in every format, whatever it names them.
"""

import os

from albert_tf.checkpoints import formats, huggingface, keras_hub
from albert_tf.checkpoints.tf1 import open_checkpoint, resolve_checkpoint_prefix

SIZE_KEYS = ("vocab_size", "embedding_size", "hidden_size", "intermediate_size")


class ConfigSizeMismatch(ValueError):
    """A config's size that no stored weight has (a checkpoint that cannot be read raises its reader's error)."""


def _hdf5_shapes(path):
    import h5py  # pylint: disable=g-import-not-at-top

    shapes = {}
    try:
        with h5py.File(path, "r") as handle:
            handle.visititems(lambda name, item: shapes.update({name: item.shape}) if hasattr(item, "shape") else None)
    except OSError as error:
        raise ValueError(f"{path} is not a readable HDF5 weights file ({error}).") from None
    return shapes


def stored_shapes(path):
    """{name: shape} of the weights stored at `path` (a checkpoint of any format `load` reads), or
    None for a Keras file, which carries its own config."""
    found = formats.foreign_format(path)
    path = os.fspath(path)
    if found == formats.HUGGING_FACE:
        return huggingface.huggingface_weight_shapes(path)
    if found == formats.KERAS_HUB:
        return _hdf5_shapes(os.path.join(path, keras_hub.WEIGHTS_NAME))
    if path.endswith((".keras", ".weights.h5")):
        return None
    return open_checkpoint(resolve_checkpoint_prefix(path)).get_variable_to_shape_map()


def check_config_sizes(config, path, config_source):
    """Raises ValueError naming `config_source` (where `config` was read) when one of its sizes is
    the length of no axis of the weights stored at `path`: the config is not that checkpoint's."""
    lengths = sorted({int(length) for shape in (stored_shapes(path) or {}).values() for length in shape})
    if not lengths:  # no weight at all (scalars only): its load names what the checkpoint lacks
        return
    for key in SIZE_KEYS:
        value = getattr(config, key)
        if value not in lengths:
            shown = ", ".join(map(str, lengths[:12])) + (", ..." if len(lengths) > 12 else "")
            raise ConfigSizeMismatch(f"{config_source}: {key} {value} is the size of no weight in {os.fspath(path)} "
                             f"(its weights' sizes: {shown}); this config is not the checkpoint's")
