"""What a reader yields: the weights one file holds, named by the original's TF1 names.

Every format's reader (`tf1`, `ours`, `keras_file`, `huggingface`, `keras_hub`) returns a
`StoredWeights`, so that one loader (`loading.load`) matches, checks and assigns them all.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class StoredWeights:
    """What one file holds: `shapes` {name: shape} and `read(name)` for the model's weights,
    `skipped` for entries that are never loaded (optimizer slots, steps, tied copies).

    A weight the model has is named by its TF1 name; one it does not have by whatever name the
    file gives it. `foreign_names` ({TF1 name: the file's name}) is for formats with names of
    their own (HF, keras-hub), so that reports can name both.
    """

    path: str
    format: str
    shapes: dict
    read: object
    skipped: tuple = ()
    hub_prefix: bool = False
    foreign_names: dict = dataclasses.field(default_factory=dict)

    def described(self, name):
        """`name`, with the file's own name in brackets where it differs."""
        foreign = self.foreign_names.get(name)
        return name if foreign in (None, name) else f"{name} ({foreign})"
