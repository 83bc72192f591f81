"""web/serve.py probed as a hostile client would, on loopback: it serves its allow-list and the
model, nothing else (no sources, listings, links out of web/, other Host headers), drops idle
clients, serves a bounded number at once, and says nothing when a client leaves mid-download.

The server is pointed at a copy of web/ (its `served_files.txt`, placeholder files for each, and the
files it must not serve), so links and FIFOs are planted there, never in the checkout.
"""

import http.client
import importlib.util
import os
import shutil
import socket
import threading
import time

import pytest

from glue_test_data import REPO

WEB = os.path.join(REPO, "web")
NOT_SERVED = ["serve.py", "install_browser.sh", "run_page.mjs", "package.json", "package-lock.json",
              "served_files.txt", "node_modules/@mediapipe/tasks-text/package.json",
              "node_modules/@mediapipe/tasks-text/wasm/text_wasm_module_internal.wasm"]
MODEL_BYTES = b"\0\0\0\0TFL3" + bytes(4 << 20)  # big enough that a client leaving reads only part of it


def _serve_module():
    spec = importlib.util.spec_from_file_location("web_serve", os.path.join(WEB, "serve.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def site(tmp_path, monkeypatch):
    """(the serve module, its web directory copy, the model path), placeholders named by their paths."""
    serve = _serve_module()
    web = tmp_path / "web"
    web.mkdir()
    shutil.copy(os.path.join(WEB, "served_files.txt"), web)
    monkeypatch.setattr(serve, "WEB_DIR", str(web))
    monkeypatch.setattr(serve, "SERVED_LIST", str(web / "served_files.txt"))
    for name in serve.served_files() + [name for name in NOT_SERVED if name != "served_files.txt"]:
        path = web / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"contents of {name}")
    model = tmp_path / "model.tflite"
    model.write_bytes(MODEL_BYTES)
    return serve, web, model


def _get(url, path, host=None, method="GET"):
    """(status, headers, body) of one request; `host` replaces the Host header ("" sends none)."""
    address = url.split("/")[2]
    connection = http.client.HTTPConnection(address, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host != "":
            connection.putheader("Host", host or address)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_it_serves_the_allow_list_and_the_model_with_their_types(site, capfd):
    serve, web, model = site
    with serve.serving(str(model)) as url:
        assert _get(url, "/")[2] == _get(url, "/index.html")[2] == b"contents of index.html"
        status, headers, body = _get(url, "/node_modules/@mediapipe/tasks-text/wasm/text_wasm_internal.wasm")
        assert (status, headers["Content-Type"]) == (200, "application/wasm")
        assert _get(url, "/node_modules/@mediapipe/tasks-text/text_bundle.mjs")[1]["Content-Type"] == "text/javascript"
        assert _get(url, "/model.tflite?cache=1")[2] == MODEL_BYTES
        status, headers, body = _get(url, "/page.js", method="HEAD")
        assert (status, headers["Content-Length"], body) == (200, str(len("contents of page.js")), b"")
        assert _get(url, "/page.js", host=f"localhost:{url.split(':')[2].rstrip('/')}")[0] == 200
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("path", [f"/{name}" for name in NOT_SERVED] + [
    "/node_modules/", "/node_modules/@mediapipe/tasks-text/", "/wasm/", "/..", "/../serve.py",
    "/%2e%2e/web/serve.py", "//etc/passwd", "/page.js/", "/%00", "/page.js%00.css", "/index.html/..%2fserve.py",
    "/nothing"])
def test_it_serves_nothing_else(site, path, capfd):
    serve, web, model = site
    with serve.serving(str(model)) as url:
        status, _, body = _get(url, path)
    assert status == 404
    assert b"contents of" not in body and b"Directory listing" not in body
    assert capfd.readouterr().err == ""


def test_it_follows_no_link_out_of_web_and_opens_no_fifo(site, tmp_path):
    serve, web, model = site
    (tmp_path / "secret").write_text("the password")
    with serve.serving(str(model)) as url:  # planted while it serves
        os.remove(web / "page.css")
        os.symlink(tmp_path / "secret", web / "page.css")
        os.remove(web / "page.js")
        os.mkfifo(web / "page.js")
        os.remove(web / "index.html")
        os.symlink(web / "served_files.txt", web / "index.html")  # a link inside web/ is followed
        assert _get(url, "/page.css")[0] == 404
        assert _get(url, "/page.js")[0] == 404  # at once: opening the FIFO waits for no writer
        assert _get(url, "/index.html")[2].startswith(b"# What web/serve.py serves")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost.evil.example:{port}",
                                  "", "0.0.0.0:{port}"])
def test_it_answers_only_its_own_host_names(site, host):
    """DNS rebinding: a site's name pointed at 127.0.0.1 reaches the port, but its Host header says so."""
    serve, web, model = site
    with serve.serving(str(model)) as url:
        port = url.split(":")[2].rstrip("/")
        status, _, body = _get(url, "/model.tflite", host=host.format(port=port))
    assert status == 421 and MODEL_BYTES[:8] not in body


def test_idle_clients_are_dropped_and_at_most_max_clients_are_held(site):
    serve, web, model = site
    with serve.serving(str(model), max_clients=4, idle_seconds=0.5) as url:
        port = int(url.split(":")[2].rstrip("/"))
        threads_before = threading.active_count()
        half_sent = []
        for _ in range(12):
            client = socket.create_connection(("127.0.0.1", port), timeout=10)
            client.sendall(b"GET / HTTP/1.1\r\nHost: ")  # never finished
            half_sent.append(client)
        time.sleep(0.2)
        assert threading.active_count() <= threads_before + 4
        started = time.monotonic()
        for client in half_sent:  # each is closed by the server: refused at once, or dropped when idle
            assert client.recv(1024) == b"" or client.recv(1024) == b""
            client.close()
        assert time.monotonic() - started < 5
        assert _get(url, "/page.js")[0] == 200  # served again once the idle ones are gone


def test_a_client_leaving_mid_download_is_no_error(site, capfd):
    serve, web, model = site
    with serve.serving(str(model)) as url:
        port = int(url.split(":")[2].rstrip("/"))
        for _ in range(3):
            client = socket.create_connection(("127.0.0.1", port), timeout=10)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # close with a reset
            client.sendall(f"GET /model.tflite HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            client.recv(4096)
            client.close()
        time.sleep(0.5)
        assert _get(url, "/page.js")[0] == 200
    assert capfd.readouterr().err == ""


def test_a_half_installed_node_modules_is_named_before_serving(site):
    serve, web, model = site
    os.remove(web / "node_modules/@mediapipe/tasks-text/wasm/text_wasm_internal.wasm")
    with pytest.raises(ValueError, match=r"node_modules: the page's npm packages are missing or half installed "
                                         r"\(no node_modules/@mediapipe/tasks-text/wasm/text_wasm_internal.wasm\); "
                                         r"run `bash web/install_browser.sh`"):
        with serve.serving(str(model)):
            pass
