"""The progress line: counts, rate and ETA, and no duplicated final line."""

import io
import time

from albert_tf.progress import Progress, format_duration, working


def test_progress_lines_show_count_rate_and_eta():
    stream = io.StringIO()
    progress = Progress("work", total=4, unit="items", interval=0.0, stream=stream)
    progress.update(1, extra="instances=7")
    progress.update(2)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("work: 1/4 items, ") and "items/s" in lines[0] and "ETA" in lines[0]
    assert lines[0].endswith("instances=7")
    assert lines[1].startswith("work: 3/4 items")


def test_close_does_not_repeat_the_last_line():
    stream = io.StringIO()
    progress = Progress("work", total=2, interval=0.0, stream=stream)
    progress.update(2)
    progress.close()
    assert len(stream.getvalue().splitlines()) == 1
    progress = Progress("work", total=2, interval=3600.0, stream=stream)
    progress.update(1)  # printed (first update)
    progress.update(1)  # not printed (interval)
    progress.close()
    assert stream.getvalue().splitlines()[-1].startswith("work: 2/2 it")


def test_format_duration():
    assert format_duration(59) == "00:59"
    assert format_duration(3723) == "1:02:03"


def test_working_prints_start_heartbeats_and_end():
    stream = io.StringIO()
    with working("writing", interval=0.05, stream=stream):
        time.sleep(0.2)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("writing: started, elapsed 00:00")
    assert lines[-1].startswith("writing: done, elapsed 00:00")
    assert len(lines) >= 3 and all(line.startswith("writing: working, elapsed") for line in lines[1:-1])


def test_working_says_nothing_more_after_a_failure():
    stream = io.StringIO()
    try:
        with working("writing", interval=10.0, stream=stream):
            raise OSError("disk full")
    except OSError:
        pass
    assert stream.getvalue().splitlines() == ["writing: started, elapsed 00:00"]
