"""Keras files (`.keras`, `.weights.h5`) of task models saved by earlier versions, whose weights sit
under other paths in the file than the models' weights sit now.

Keras finds each layer's weights in the file by the layer's path in the model. When the task
models became functional models that call their backbone as one layer (the pretraining model in
commit f7cae30, RACE's in 08d371d, SQuAD's after them), the backbone's weights, and those of the
heads that were attributes of a subclassed model, moved to other paths:

- `AlbertPretrainingModel` wired the backbone's layers into its own graph: they were at
  `layers/factorized_embedding` (and `shared_transformer_encoder`, `dense`, the pooler), now at
  `layers/albert_model/layers/...`; the heads stay at `layers/masked_lm_head`, ....
- `AlbertMultipleChoice` was a subclassed model: its backbone was at `albert`, its head at
  `classification_head`; now at `layers/albert_model` and `layers/classification_head`.
- `AlbertQuestionAnswering` was a subclassed model too, its backbone at `albert`, now at
  `layers/albert_model`; its head stays at `layers/span_logits_head` (v1.1) or
  `layers/answerability_span_head` (Keras walked the model's `layers` before its `qa_head`).

A file of the earlier layout is read through an in-memory copy with those groups moved; any other
file is read as it is (and fails as Keras says when it does not fit).
"""

import dataclasses
import io

import h5py


@dataclasses.dataclass(frozen=True)
class EarlierLayout:
    """`moves`: (the earlier file's group, where the model's weights are now), each; `kept`:
    groups at the same place in both, which tell the layout from another model's."""

    moves: tuple
    kept: tuple = ()


EARLIER_LAYOUTS = {
    "AlbertPretrainingModel": EarlierLayout(
        moves=tuple((f"layers/{layer}", f"layers/albert_model/layers/{layer}")
                    for layer in ("factorized_embedding", "shared_transformer_encoder", "dense")),
        kept=("layers/masked_lm_head", "layers/sentence_order_head"),  # a backbone's file has the rest
    ),
    "AlbertMultipleChoice": EarlierLayout(
        moves=(("albert", "layers/albert_model"), ("classification_head", "layers/classification_head")),
    ),
    "AlbertQuestionAnswering v1.1": EarlierLayout(
        moves=(("albert", "layers/albert_model"),), kept=("layers/span_logits_head",),
    ),
    "AlbertQuestionAnswering v2.0": EarlierLayout(
        moves=(("albert", "layers/albert_model"),), kept=("layers/answerability_span_head",),
    ),
}


def _layout_of(model):
    """The earlier layout of `model`'s class (and SQuAD version), or None."""
    name = type(model).__name__
    if hasattr(model, "version_2_with_negative"):
        name += " v2.0" if model.version_2_with_negative else " v1.1"
    return EARLIER_LAYOUTS.get(name)


def is_earlier_layout(h5_file, layout):
    """Whether `h5_file` holds every group `layout` moves and keeps, and none at their new places."""
    return (all(old in h5_file and new not in h5_file for old, new in layout.moves)
            and all(group in h5_file for group in layout.kept))


def with_current_layout(h5_file, layout):
    """An in-memory copy of `h5_file` with the groups `layout` moves at their current paths."""
    copy = h5py.File(io.BytesIO(), "w")
    copy.attrs.update(h5_file.attrs)
    for name in h5_file:
        h5_file.copy(h5_file[name], copy, name=name)
    for old, new in layout.moves:
        copy.require_group(new.rsplit("/", 1)[0])
        copy.move(old, new)
    return copy


def read_earlier_layout(model, store):
    """For the model's `load_own_variables` (Keras loads the model itself first, then its layers
    from the same `store`): if the file is of an earlier layout of `model`'s class, the store reads
    on from the moved copy. Relies on Keras' H5 store keeping its open file in `h5_file`."""
    layout = _layout_of(model)
    h5_file = getattr(store, "h5_file", None)
    if layout and isinstance(h5_file, h5py.File) and is_earlier_layout(h5_file, layout):
        store.h5_file = with_current_layout(h5_file, layout)
        h5_file.close()
