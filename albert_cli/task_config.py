"""A command's flags as its task's config (`albert_tf.tasks`): one field per flag of the same name.

Not given, `--albert_config_file` becomes None when `--init_checkpoint` is given: the config then
comes from the checkpoint, as the flag's help says (`albert_tf.tasks.model_inputs.model_config`).
"""

import dataclasses


def config_from_flags(config_class, flag_values):
    """The `config_class` of the parsed `flag_values`; a field without a flag keeps its default."""
    values = {field.name: flag_values[field.name].value for field in dataclasses.fields(config_class)
              if field.name in flag_values}
    if flag_values.init_checkpoint:
        values["albert_config_file"] = given_config_file(flag_values)
    return config_class(**values)


def given_config_file(flag_values):
    """`--albert_config_file` when it was given on the command line, else None (the config then comes
    from `--init_checkpoint`, else the flag's default)."""
    return flag_values.albert_config_file if flag_values["albert_config_file"].present else None
