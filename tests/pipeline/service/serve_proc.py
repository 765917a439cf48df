"""Helpers for tests that run ``docpipe serve`` as a real subprocess: a free port, start, wait until ready,
stop (or all of it as ``serving``), and the resident memory of its process tree read from /proc."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(cfg: Path, port: int, log: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("DOCPIPE_TOKEN", None)
    return subprocess.Popen([sys.executable, "-m", "pipeline.cli", "serve", "--config", str(cfg), "--port", str(port),
                             *extra], cwd=REPO, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT)


def wait_ready(url: str, proc: subprocess.Popen, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "server exited during start-up"
        try:
            if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError("server not ready")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@dataclass(frozen=True)
class Server:
    url: str
    port: int
    proc: subprocess.Popen


@contextmanager
def serving(cfg: Path, log: Path, *extra: str) -> Iterator[Server]:
    """``docpipe serve`` with ``cfg`` on a free loopback port, ready on entry, stopped on exit."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(cfg, port, log, *extra)
    try:
        wait_ready(url, proc)
        yield Server(url, port, proc)
    finally:
        stop(proc)


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])  # the field after the state, past the command name
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def tree_rss_bytes(pid: int) -> int:
    """VmRSS summed over ``pid`` and all its descendants (shared pages counted in each: an upper bound)."""
    kids = _children()
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, ()))
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return total
