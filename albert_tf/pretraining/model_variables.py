"""How model weights are laid out in our checkpoints: one entry per Keras variable path.

Keyed by path (`encoder/group_0_inner_group_0_attention/query/kernel`), not by the object
graph of layers: the checkpoint then holds every variable whatever containers the layers keep
their sub-layers in (the encoder's dicts of sub-layers are invisible to object-graph tracking),
and its keys say which weight they hold.
"""

CHECKPOINT_KEY = "model_weights"


def variables_by_path(model):
    """{variable path: variable} for every variable of `model` (trainable or not)."""
    variables = {variable.path: variable for variable in model.variables}
    if len(variables) != len(model.variables):
        raise ValueError(f"{model.name}: variable paths are not unique")
    return variables
