"""The HTTP API over real HTTP on loopback (uvicorn in a thread), with the session's in-process engine."""
from __future__ import annotations

import threading
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from pipeline.service.app import create_app
from pipeline.service.auth import is_loopback, resolve_auth
from tests.conftest import SAMPLES, text_image
from tests.pipeline.service.conftest import live_server, service_config, wait_job

pytestmark = pytest.mark.slow


def small_page() -> bytes:
    import cv2

    img = text_image(["保险单号：2025-123456-000001", "投保人：张三"], width=560)
    return cv2.imencode(".png", img)[1].tobytes()


def metric_values(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_sync_extract_multipart_and_raw_and_bad_input(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path), engine=inline_engine)
    page = small_page()
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        r = c.post("/v1/extract", files={"file": ("p.png", page, "image/png")})
        assert r.status_code == 200, r.text
        res = r.json()
        assert res["schema_version"] == "1" and res["source"] == "p.png" and res["errors"] == []
        assert res["pages"][0]["width"] == 560 and any("张三" in ln["text"] for ln in res["pages"][0]["lines"])
        assert r.headers["x-request-id"]
        raw = c.post("/v1/extract?filename=raw.png", content=page)
        assert raw.status_code == 200 and raw.json()["source"] == "raw.png"
        assert raw.json()["fields"].keys() == res["fields"].keys()
        bad = c.post("/v1/extract", content=b"not an image at all")
        assert bad.status_code == 200  # a per-document error record, like batch
        assert bad.json()["errors"][0]["type"] == "UnsupportedFormat"
        empty = c.post("/v1/extract", content=b"")
        assert empty.status_code == 400 and empty.json()["errors"][0]["type"] == "NoDocument"
        missing = c.get("/v1/jobs/nope")
        assert missing.status_code == 404 and missing.json()["errors"][0]["stage"] == "service"
        assert c.get("/healthz").json() == {"status": "ok"}
        assert c.get("/readyz").status_code == 200
        assert "/v1/extract" in c.get("/openapi.json").json()["paths"]
        assert c.get("/docs").status_code == 200


def test_async_job_202_location_and_results(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path), engine=inline_engine)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        r = c.post("/v1/jobs", files=[("file", ("a.png", small_page(), "image/png")),
                                      ("file", ("b.bin", b"garbage", "application/octet-stream"))])
        assert r.status_code == 202, r.text
        assert r.headers["location"] == f"/v1/jobs/{r.json()['id']}" and int(r.headers["retry-after"]) >= 1
        early = c.get(r.headers["location"] + "/results")
        assert early.status_code in (200, 409)
        job = wait_job(c, r.headers["location"])
        assert job["status"] == "succeeded" and job["documents"] == 2
        results = c.get(job["results"]).json()["results"]
        assert [x["source"] for x in results] == ["a.png", "b.bin"]
        assert results[0]["errors"] == [] and results[1]["errors"][0]["stage"] == "decode"


def test_413_on_chunked_upload_over_the_limit(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path, input={"max_file_bytes": 50_000}), engine=inline_engine)

    def chunks(total=400_000, size=16_384):
        sent = 0
        while sent < total:
            yield b"\0" * size
            sent += size

    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        for path in ("/v1/extract", "/v1/jobs"):
            r = c.post(path, content=chunks())  # a generator body: Transfer-Encoding: chunked, no Content-Length
            assert r.status_code == 413, (path, r.status_code, r.text)
            assert r.json()["errors"][0]["type"] == "PayloadTooLarge"
        assert "content-length" not in c.build_request("POST", "/", content=chunks()).headers
        declared = c.post("/v1/extract", content=b"\0" * 60_000)  # with Content-Length: refused unread
        assert declared.status_code == 413
        ok = c.post("/v1/extract", content=small_page())  # under the limit still works
        assert ok.status_code == 200
        metrics = metric_values(c.get("/metrics").text)
        assert metrics[("docpipe_rejected_total", (("reason", "PayloadTooLarge"),))] == 3


def test_token_required_on_non_loopback_bind(inline_engine, tmp_path):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3") and not is_loopback("example.org")
    with pytest.raises(ValueError, match="DOCPIPE_TOKEN"):
        resolve_auth("0.0.0.0", None, {})
    assert not resolve_auth("127.0.0.1", None, {}).required
    assert resolve_auth("0.0.0.0", None, {"DOCPIPE_TOKEN": "env-token"}).token == "env-token"
    # the app planned for a public bind, served (for the test) on loopback only
    app = create_app(service_config(tmp_path), host="0.0.0.0", engine=inline_engine, environ={"DOCPIPE_TOKEN": "s3cret"})
    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        r = c.get("/v1/review/queue")
        assert r.status_code == 401 and r.json()["errors"][0]["type"] == "Unauthorized"
        assert c.post("/v1/extract", content=b"x").status_code == 401
        assert c.get("/v1/review/queue", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/v1/review/queue", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert c.get("/healthz").status_code == 200 and c.get("/metrics").status_code == 200


def test_429_when_engine_queue_full_and_503_when_job_backlog_full(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path, max_in_flight=1, max_queued_documents=1), engine=inline_engine)
    page = small_page()
    codes: list[int] = []
    retry = []
    with live_server(app) as url:
        def call():
            with httpx.Client(base_url=url, timeout=300) as c:
                r = c.post("/v1/extract", content=page)
                codes.append(r.status_code)
                if r.status_code == 429:
                    retry.append(r.headers.get("retry-after"))
                    assert r.json()["errors"][0]["type"] == "QueueFull"

        threads = [threading.Thread(target=call) for _ in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(set(codes)) == [200, 429], codes
        assert all(v and int(v) >= 1 for v in retry)
        with httpx.Client(base_url=url, timeout=300) as c:
            first = c.post("/v1/jobs", files=[("file", ("a.png", page)), ("file", ("b.png", page))])
            assert first.status_code == 202
            second = c.post("/v1/jobs", content=page)
            assert second.status_code == 503 and int(second.headers["retry-after"]) >= 1
            assert second.json()["errors"][0]["type"] == "JobQueueFull"
            wait_job(c, first.headers["location"])
            assert c.post("/v1/jobs", content=page).status_code == 202


def test_metrics_count_real_requests(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path), engine=inline_engine)
    page = small_page()
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        for _ in range(2):
            assert c.post("/v1/extract", content=page).status_code == 200
        assert c.post("/v1/extract", content=b"garbage").status_code == 200
        job = c.post("/v1/jobs", content=page)
        wait_job(c, job.headers["location"])
        text = c.get("/metrics").text
        m = metric_values(text)
        docs = {o: m[("docpipe_documents_total", (("outcome", o),))] for o in ("ok", "needs_review", "error")}
        assert sum(docs.values()) == 4 and docs["error"] == 1
        assert m[("docpipe_http_requests_total", (("method", "POST"), ("route", "/v1/extract"), ("status", "200")))] == 3
        assert m[("docpipe_http_requests_total", (("method", "POST"), ("route", "/v1/jobs"), ("status", "202")))] == 1
        assert m[("docpipe_stage_seconds_count", (("stage", "recognize"),))] == 3
        assert m[("docpipe_stage_seconds_count", (("stage", "decode"),))] == 4
        assert ("docpipe_queue_depth", (("queue", "jobs"),)) in m
        reasons = [k for k in m if k[0] == "docpipe_review_reasons_total"]
        assert reasons and all(dict(k[1])["field"] in set(app.state.svc.field_keys) | {"decode", ""} for k in reasons)
        assert "张三" not in text and "garbage" not in text


def test_event_loop_stays_free_while_documents_are_processed(inline_engine, tmp_path):
    """While a synchronous extraction is inside the engine, other requests are answered (ordering, not timing)."""
    app = create_app(service_config(tmp_path), engine=inline_engine)
    page = (SAMPLES / "test_00000.jpg").read_bytes()
    done = threading.Event()
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        def slow():
            with httpx.Client(base_url=url, timeout=300) as c2:
                assert c2.post("/v1/extract", content=page).status_code == 200
            done.set()

        t = threading.Thread(target=slow)
        t.start()
        while app.state.svc.admission.used == 0 and not done.is_set():
            time.sleep(0.005)
        answers = [c.get("/healthz").status_code, c.get("/metrics").status_code, c.get("/v1/review/queue").status_code]
        in_flight = not done.is_set()
        t.join()
        assert answers == [200, 200, 200]
        assert in_flight, "the page finished before the other requests were answered"
