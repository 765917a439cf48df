"""One ``docpipe serve`` per data folder: the lock is taken before the job store is opened, so a second
instance exits with a clear message and touches nothing -- not even the first one's running documents."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pipeline.service.datadir import DataDirBusy, DataDirLock, data_dir_of
from tests.pipeline.service.conftest import wait_job
from tests.pipeline.service.serve_proc import REPO, free_port, serving
from tests.pipeline.service.test_app import small_page


def test_lock_is_exclusive_and_released(tmp_path):
    first = DataDirLock(tmp_path / "d").acquire()
    with pytest.raises(DataDirBusy, match="in use by another docpipe serve"):
        DataDirLock(tmp_path / "d").acquire()
    # another process is refused too (flock is per open file, held until the holder closes it or exits)
    probe = ("import sys; from pathlib import Path; from pipeline.service.datadir import DataDirLock, DataDirBusy\n"
             "try:\n DataDirLock(Path(sys.argv[1])).acquire()\nexcept DataDirBusy:\n sys.exit(3)\n")
    assert subprocess.run([sys.executable, "-c", probe, str(tmp_path / "d")], cwd=REPO).returncode == 3
    first.release()
    DataDirLock(tmp_path / "d").acquire().release()


def test_default_data_dir_is_per_user(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir_of(None) == tmp_path / "xdg" / "docpipe"
    assert data_dir_of(Path("~/x")) == Path.home() / "x"


@pytest.mark.slow
def test_second_instance_on_the_same_data_dir_exits_and_touches_nothing(tmp_path):
    data = tmp_path / "store"
    cfg = tmp_path / "serve.yaml"
    cfg.write_text(f"engine: {{mode: inline}}\nservice: {{data_dir: '{data}', job_in_flight: 1, retry_after_s: 1}}\n")
    with serving(cfg, tmp_path / "first.log") as server:
        url, port = server.url, server.port
        with httpx.Client(base_url=url, timeout=300) as c:
            page = small_page()
            job = c.post("/v1/jobs", files=[("file", (f"p{i}.png", page)) for i in range(4)])
            assert job.status_code == 202
            while True:  # until the first instance has a document running
                status = c.get(job.headers["location"]).json()
                assert status["status"] in ("queued", "running"), "the job ended before a document was seen running"
                if status["document_status"].get("running", 0):
                    break
                time.sleep(0.02)
            before = (data / "jobs.sqlite3").stat().st_mtime_ns
            for other_port in (port, free_port()):  # its port taken or not: refused before anything opens
                second = subprocess.run(
                    [sys.executable, "-m", "pipeline.cli", "serve", "--config", str(cfg), "--port", str(other_port)],
                    cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                    timeout=300)
                assert second.returncode == 3, second.stderr
                assert "in use by another docpipe serve" in second.stderr and str(data) in second.stderr
            finished = wait_job(c, job.headers["location"])
            assert finished["status"] == "succeeded" and finished["documents"] == 4
            results = c.get(finished["results"]).json()["results"]
            assert all(not r["errors"] for r in results)  # none marked Interrupted by the second instance
        assert (data / "jobs.sqlite3").stat().st_mtime_ns >= before
        db = sqlite3.connect(data / "jobs.sqlite3")
        assert db.execute("SELECT COUNT(*) FROM events WHERE kind='interrupted'").fetchone()[0] == 0
        db.close()
