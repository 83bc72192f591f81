"""Why a training run cannot resume from its output directory, said in one line.

TensorFlow ignores an unreadable `checkpoint` state file (the run would start again from step 0
and later overwrite it) and fails with a long trace on a checkpoint of another model or a
truncated one. These checks name what is there, what was expected, and an intact older
checkpoint when the latest one is damaged; `fall_back_to_intact` resumes from that one.
"""

import glob
import os

import tensorflow as tf
from google.protobuf import text_format

from albert_tf.error_text import SettingError, error_line
from albert_tf.io_utils import atomic_open
from albert_tf.training.checkpoint_saving import latest_checkpoint


def check_checkpoint_state(directory):
    """Raises a SettingError if `directory` (`output_dir`) holds checkpoints that its `checkpoint`
    file does not name."""
    prefixes = checkpoint_prefixes(directory)
    if prefixes and latest_checkpoint(directory) is None:
        raise SettingError(
            "{output_dir} {directory}: its `checkpoint` state file is missing or unreadable, but it holds {held}; "
            "write `model_checkpoint_path: \"{last}\"` into {state_file} to resume from it, or use another "
            "{output_dir}", directory=directory, held=", ".join(os.path.basename(p) for p in prefixes),
            last=os.path.basename(prefixes[-1]), state_file=os.path.join(directory, "checkpoint"))


def check_resumable(directory, model, fall_back_setting=None):
    """Raises a SettingError unless the latest checkpoint in `directory` (if any) reads in full and
    holds every variable of `model` with its shape. Restoring does not always say so itself:
    a Keras variable takes a tensor of another shape without a word. `fall_back_setting`: the
    caller's setting that runs `fall_back_to_intact`, offered when the latest one is damaged."""
    check_checkpoint_state(directory)
    latest = latest_checkpoint(directory)
    if latest is None:
        return
    if damaged(latest) is not None:
        raise cannot_resume(directory, None, fall_back_setting)
    problems = mismatches(latest, model)
    if problems:
        raise cannot_resume(directory, problems)


def fall_back_to_intact(directory):
    """If the latest checkpoint in `directory` is damaged, deletes it and every damaged one after
    the newest intact checkpoint, and makes that one the latest (the `checkpoint` state file);
    returns a line saying what it did, or None if there was nothing to do. Raises a
    SettingError if no
    checkpoint is intact. Call before a `CheckpointManager` reads the directory."""
    latest = latest_checkpoint(directory)
    if latest is None or damaged(latest) is None:
        return None
    prefixes = checkpoint_prefixes(directory)
    intact = next((prefix for prefix in reversed(prefixes) if damaged(prefix) is None), None)
    if intact is None:
        raise cannot_resume(directory, None)
    dropped = [prefix for prefix in prefixes if _step(prefix) > _step(intact)]
    state = tf.train.get_checkpoint_state(directory)
    paths, times = list(state.all_model_checkpoint_paths), list(state.all_model_checkpoint_timestamps)
    kept = [index for index, path in enumerate(paths) if _step(path) <= _step(intact)]
    state.model_checkpoint_path = os.path.basename(intact)
    del state.all_model_checkpoint_paths[:], state.all_model_checkpoint_timestamps[:]
    state.all_model_checkpoint_paths.extend(os.path.basename(paths[index]) for index in kept)
    if len(times) == len(paths):
        state.all_model_checkpoint_timestamps.extend(times[index] for index in kept)
    with atomic_open(os.path.join(directory, "checkpoint")) as handle:
        handle.write(text_format.MessageToString(state))
    for prefix in dropped:
        for path in glob.glob(glob.escape(prefix) + ".*"):
            os.remove(path)
    return (f"deleted the damaged {', '.join(os.path.basename(p) for p in dropped)}; "
            f"resuming from the intact {intact}")


def mismatches(prefix, model):
    """None if the checkpoint at `prefix` holds every variable of `model` with its shape, else a
    short description of what differs. Every ALBERT model is compared: pretraining, classifier,
    backbone, SQuAD and RACE."""
    from albert_tf.checkpoints import open_weights, tf1_variables  # pylint: disable=g-import-not-at-top

    variables = tf1_variables(model)
    shapes = open_weights(prefix, model).shapes
    problems = [f"{name}: {shapes[name]} stored, {list(variable.shape)} expected" if name in shapes
                else f"{name}: missing" for name, variable in variables.items()
                if shapes.get(name) != list(variable.shape)]
    return f"{len(problems)} variable(s) differ, e.g. {problems[0]}" if problems else None


def cannot_resume(directory, error, fall_back_setting=None):
    """The SettingError for a failed restore of the latest checkpoint in `directory`."""
    latest = latest_checkpoint(directory)
    damage = damaged(latest) if latest else None
    if damage is None:
        detail = " ".join(str(error).split())[:300] or type(error).__name__
        return SettingError("{output_dir} {directory} holds {latest}, which does not fit this model ({detail}); "
                            "use another {output_dir}, or the config and task it was trained with",
                            directory=directory, latest=latest, detail=detail)
    older = [prefix for prefix in reversed(checkpoint_prefixes(directory))
             if prefix != latest and damaged(prefix) is None]
    how = ("run again with {%s} (or delete {latest}.*)" % fall_back_setting if fall_back_setting
           else "delete {latest}.* and run again")
    offer = ("the older {older} is intact: " + how + " to resume from it"
             if older else "no older checkpoint is intact: use another {output_dir}")
    return SettingError("{output_dir}: the latest checkpoint {latest} is damaged ({damage}); " + offer,
                        latest=latest, damage=damage, older=older[0] if older else None)


def damaged(prefix):
    """None if every tensor of the checkpoint at `prefix` reads, else what went wrong."""
    try:
        reader = tf.train.load_checkpoint(prefix)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except (tf.errors.OpError, IndexError, ValueError) as error:
        return error_line(error)
    return None


def checkpoint_prefixes(directory):
    """Checkpoint prefixes (`*.index` less the suffix) in `directory`, oldest step first."""
    indexes = glob.glob(os.path.join(glob.escape(directory), "*.index"))
    return sorted((index[: -len(".index")] for index in indexes), key=_step)


def _step(prefix):
    tail = prefix.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1
