"""The job runner survives a failing store (logs the exception type, backs off, recovers) and ``/readyz``
says so while it fails; jobs are refused with 503 while the service cannot run them."""
from __future__ import annotations

import logging
import sqlite3
import time

import httpx
import pytest

from pipeline.service.app import create_app
from tests.pipeline.service.conftest import live_server, service_config, wait_job
from tests.pipeline.service.test_app import small_page

pytestmark = pytest.mark.slow


def _until(predicate, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.05)


def test_runner_recovers_from_store_errors_and_readyz_reports_it(inline_engine, tmp_path, caplog):
    app = create_app(service_config(tmp_path, retry_after_s=1), engine=inline_engine)
    store = app.state.svc.store
    real_claim = store.claim
    calls = {"failed": 0}

    def full_disk(limit):
        calls["failed"] += 1
        raise sqlite3.OperationalError("database or disk is full: secret-value")

    with caplog.at_level(logging.INFO, logger="pipeline.service"), live_server(app) as url, \
            httpx.Client(base_url=url, timeout=300) as c:
        _until(lambda: c.get("/readyz").status_code == 200)
        store.claim = full_disk  # the runner's store call fails from now on
        _until(lambda: c.get("/readyz").status_code == 503)
        down = c.get("/readyz").json()["errors"][0]
        assert down["type"] == "NotReady" and "OperationalError" in down["message"] and "secret" not in down["message"]
        refused = c.post("/v1/jobs", content=small_page())
        assert refused.status_code == 503 and refused.json()["errors"][0]["type"] == "NotReady"
        _until(lambda: calls["failed"] >= 2)  # still trying (after a back-off), not dead
        assert app.state.svc.runner._thread.is_alive()
        store.claim = real_claim
        _until(lambda: c.get("/readyz").status_code == 200)
        job = c.post("/v1/jobs", content=small_page())
        assert job.status_code == 202
        assert wait_job(c, job.headers["location"])["status"] == "succeeded"
    failed = [r for r in caplog.records if r.getMessage() == "job runner step failed; backing off"]
    assert len(failed) == 1 and failed[0].error_types == ["OperationalError"]  # once per outage, type only
    assert any(r.getMessage() == "job runner recovered" for r in caplog.records)
    assert not any("secret-value" in r.getMessage() for r in caplog.records)


def test_jobs_503_while_the_engine_is_not_ready(tmp_path):
    def no_models():
        raise RuntimeError("model files missing")

    app = create_app(service_config(tmp_path), engine_factory=no_models)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        _until(lambda: app.state.svc.holder.error is not None)
        ready = c.get("/readyz")
        assert ready.status_code == 503 and "model files missing" in ready.json()["errors"][0]["message"]
        for path in ("/v1/jobs", "/v1/extract"):
            r = c.post(path, content=small_page())
            assert r.status_code == 503 and r.json()["errors"][0]["type"] == "NotReady" and r.headers["retry-after"]
        assert app.state.svc.store.queued_documents() == 0
