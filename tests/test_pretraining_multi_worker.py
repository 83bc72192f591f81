"""MultiWorkerMirroredStrategy: two worker processes on localhost train one model."""

import json
import os
import socket
import subprocess

import pytest
import tensorflow as tf

from pretraining_test_data import REPO_ROOT, assert_same_weights, model_weights, script_command, small_run_flags


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("localhost", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


@pytest.mark.slow
def test_two_workers_train_checkpoint_once_and_end_with_identical_weights(tmp_path):
    output_dir = str(tmp_path / "out")
    workers = [f"localhost:{port}" for port in free_ports(2)]
    flags = small_run_flags(tmp_path, output_dir, strategy="multi_worker_mirrored", num_train_steps=4, save_checkpoints_steps=100)
    processes = []
    try:
        for index in range(2):
            tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
            env = dict(os.environ, TF_CONFIG=json.dumps(tf_config), TF_CPP_MIN_LOG_LEVEL="2")
            processes.append(subprocess.Popen(script_command(flags), cwd=REPO_ROOT, env=env, text=True,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        outputs = [process.communicate(timeout=300)[1] for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    for process, stderr in zip(processes, outputs):
        assert process.returncode == 0, stderr[-3000:]

    chief = tf.train.get_checkpoint_state(output_dir)
    assert [os.path.basename(path) for path in chief.all_model_checkpoint_paths] == ["ckpt-4"]
    other = tf.train.latest_checkpoint(os.path.join(output_dir, "workertemp_1"))
    assert other.endswith("ckpt-4")
    assert_same_weights(model_weights(chief.model_checkpoint_path), model_weights(other), rtol=0, atol=0)
    with open(os.path.join(output_dir, "pretraining_summary.json")) as handle:
        assert json.load(handle)["replicas"] == 2
