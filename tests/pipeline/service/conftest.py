"""Service test helpers: a uvicorn server on a free loopback port in a thread, and service configs."""
from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from stages.contracts.config import DocpipeConfig, with_overrides  # noqa: E402


def service_config(data_dir: Path, **service) -> DocpipeConfig:
    inp = service.pop("input", {})
    return with_overrides(DocpipeConfig(), service={"data_dir": Path(data_dir), **service}, input=inp)


@contextmanager
def live_server(app):
    """Serve ``app`` over real HTTP on 127.0.0.1 (a free port); yields the base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def wait_job(client, location: str, timeout_s: float = 300.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        job = client.get(location).json()
        if job["status"] not in ("queued", "running"):
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job did not finish: {job}")
        time.sleep(0.2)
