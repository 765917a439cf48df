"""Crash test: SIGKILL ``docpipe serve`` (a real subprocess) with jobs in flight, restart it on the same
job store, and check that every accepted job ends exactly once and no document is started twice."""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from collections import Counter

import httpx
import pytest

from tests.pipeline.service.conftest import wait_job
from tests.pipeline.service.serve_proc import free_port, start_server, wait_ready
from tests.pipeline.service.test_app import small_page

pytestmark = pytest.mark.slow


def test_sigkill_with_jobs_in_flight_every_job_ends_exactly_once(tmp_path):
    data = tmp_path / "store"
    cfg = tmp_path / "serve.yaml"
    cfg.write_text(f"engine: {{mode: inline}}\nservice: {{data_dir: '{data}', job_in_flight: 2, retry_after_s: 1}}\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    proc = start_server(cfg, port, log)
    try:
        wait_ready(url, proc)
        page = small_page()
        accepted = []
        with httpx.Client(base_url=url, timeout=60) as c:
            for j in range(4):
                files = [("file", (f"j{j}_{i}.png", page, "image/png")) for i in range(3)]
                r = c.post("/v1/jobs", files=files)
                assert r.status_code == 202
                accepted.append(r.json()["id"])
            # kill once work is under way and not finished
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                states = [c.get(f"/v1/jobs/{j}").json()["status"] for j in accepted]
                if "running" in states:
                    break
                time.sleep(0.05)
            assert any(s in ("queued", "running") for s in states)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        db = sqlite3.connect(data / "jobs.sqlite3")
        before = Counter(s for (s,) in db.execute("SELECT status FROM documents"))
        db.close()
        assert before["queued"] + before["running"] > 0, before

        proc = start_server(cfg, port, log)
        wait_ready(url, proc)
        with httpx.Client(base_url=url, timeout=60) as c:
            finals = {j: wait_job(c, f"/v1/jobs/{j}", timeout_s=600) for j in accepted}
            for j, job in finals.items():
                assert job["status"] in ("succeeded", "failed")
                results = c.get(f"/v1/jobs/{j}/results").json()["results"]
                assert len(results) == 3 and all(r is not None for r in results)
                for i, r in enumerate(results):
                    assert r["source"] == f"j{accepted.index(j)}_{i}.png"
                    if r["errors"]:
                        assert r["errors"][0]["type"] == "Interrupted"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()

    db = sqlite3.connect(data / "jobs.sqlite3")
    events = db.execute("SELECT job_id, idx, kind FROM events").fetchall()
    assert {j for j, _, k in events if k == "accepted"} == set(accepted)
    finished = Counter(j for j, _, k in events if k == "job_finished")
    assert finished == Counter({j: 1 for j in accepted})  # every job ends exactly once
    per_doc = Counter((j, i, k) for j, i, k in events if i is not None)
    for j in accepted:
        for i in range(3):
            assert per_doc[(j, i, "started")] <= 1  # never started twice
            assert per_doc[(j, i, "done")] + per_doc[(j, i, "interrupted")] == 1  # ends once
    interrupted = sum(v for (_, _, k), v in per_doc.items() if k == "interrupted")
    assert interrupted == before["running"] and interrupted <= 2  # job_in_flight bounds the loss
    # the JSON log names documents by sha256, never by file name
    lines = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
    docs = [x for x in lines if x["event"] == "document"]
    assert len(docs) == sum(per_doc[(j, i, "done")] for j in accepted for i in range(3))
    assert all(len(x["sha256"]) == 64 and x["job_id"] in accepted for x in docs)
    assert ".png" not in log.read_text()
