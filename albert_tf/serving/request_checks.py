"""Checks on one served request, made in the graph before the work they guard.

Token ids: every input must have the shape of `input_word_ids` (the model would broadcast a
mask of another shape, or not read it at all), `input_mask` must be 0s and 1s with a 1 in
every row, and the ids must be in the model's vocabularies (on a GPU, TensorFlow's lookup returns
zeros for an id past the table, so a server would answer about nothing instead of failing). Raw text: a request may hold at most
`max_batch_size` rows and `max_string_bytes` bytes in any string (and a SQuAD request at most
`max_windows` windows, `squad_windows.Windows`), so that one request cannot exhaust the server.
The bounds are export-time arguments (docs/serving.md); a request past one, or with inputs of
different row counts, fails with an InvalidArgument error naming the input and the bound.
"""

import tensorflow as tf

_SUMMARIZE = 3  # values of a failed check shown after its message


def check_bounds(**bounds):
    """Raises ValueError naming a bound that is not a positive int."""
    for name, value in bounds.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def _after(checks, inputs):
    """`inputs` (a dict of tensors) as values that exist only once `checks` passed."""
    with tf.control_dependencies(checks):
        return {name: tf.identity(value) for name, value in inputs.items()}


def _rows_checks(inputs, max_rows, bound_name):
    first, first_value = next(iter(inputs.items()))
    rows = tf.shape(first_value)[0]
    checks = [tf.debugging.assert_less_equal(rows, max_rows, summarize=_SUMMARIZE, message=(
        f"{first}: a request may hold at most {max_rows} rows ({bound_name}, set at export)"))]
    checks += [tf.debugging.assert_equal(tf.shape(value)[0], rows, summarize=_SUMMARIZE, message=(
        f"{name} must have as many rows as {first}")) for name, value in inputs.items() if name != first]
    return checks


def checked_token_ids(inputs, max_rows, bound_name="max_batch_size", vocab_sizes=None):
    """`inputs` (a dict with `input_word_ids`) once each input has the shape of `input_word_ids`,
    there are at most `max_rows` rows, `input_mask` (if given) is 0s and 1s with a 1 in every
    row: the model reads it as "attend or not" (2 would count as 1, a row of no token gives an
    answer about nothing), so anything else is refused rather than answered; and each input named
    in `vocab_sizes` ({input name: (size's name, size)}) holds ids in [0, size)."""
    shape = tf.shape(inputs["input_word_ids"])
    checks = [tf.debugging.assert_equal(tf.shape(value), shape, summarize=_SUMMARIZE, message=(
        f"{name} must have the shape of input_word_ids")) for name, value in inputs.items()
        if name != "input_word_ids"]
    if "input_mask" in inputs:
        checks += _mask_checks(inputs["input_mask"])
    for name, (size_name, size) in (vocab_sizes or {}).items():
        if name in inputs:
            checks += _id_range_checks(name, inputs[name], size_name, size)
    return _after(checks + _rows_checks({"input_word_ids": inputs["input_word_ids"]}, max_rows, bound_name),
                  inputs)


def _id_range_checks(name, ids, size_name, size):
    message = f"{name}: an id must be from 0 to the model's {size_name} {size} - 1"
    return [tf.debugging.assert_non_negative(ids, summarize=_SUMMARIZE, message=message),
            tf.debugging.assert_less(ids, size, summarize=_SUMMARIZE, message=message)]


def _mask_checks(mask):
    is_one = tf.equal(mask, 1)
    return [
        tf.debugging.assert_equal(tf.reduce_all(is_one | tf.equal(mask, 0)), True, summarize=_SUMMARIZE,
                                  message="input_mask must hold only 0 (padding) and 1 (a token)"),
        tf.debugging.assert_equal(tf.reduce_all(tf.reduce_any(is_one, axis=-1)), True, summarize=_SUMMARIZE,
                                  message="input_mask: every row needs a 1 (a row of no tokens has no answer)"),
    ]


def checked_text(texts, max_batch_size, max_string_bytes):
    """`texts` (a dict of string tensors, rows first) once they have equally many rows, at most
    `max_batch_size`, and no string longer than `max_string_bytes` bytes."""
    checks = _rows_checks(texts, max_batch_size, "max_batch_size")
    checks += [tf.debugging.assert_less_equal(
        tf.reduce_max(tf.concat([tf.reshape(tf.strings.length(value), [-1]), [0]], 0)), max_string_bytes,
        summarize=_SUMMARIZE, message=f"{name}: a string may hold at most {max_string_bytes} bytes "
                                      "(max_string_bytes, set at export)") for name, value in texts.items()]
    return _after(checks, texts)
