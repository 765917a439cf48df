"""The request middleware over real HTTP on loopback (uvicorn in a thread): Host and Origin checks, bounded
metric labels, the catch-all envelope, bounded path integers, body caps and admission order, the headers of
401/405, X-Filename as UTF-8, and the API docs served without a CDN."""
from __future__ import annotations

import logging
import threading
import time

import httpx
import pytest

from pipeline.service.app import create_app
from pipeline.service.http import HostPolicy, host_name, method_label
from tests.pipeline.service.conftest import live_server, service_config, wait_job
from tests.pipeline.service.test_app import metric_values, small_page

pytestmark = pytest.mark.slow


def test_host_header_parsing_and_policy():
    assert host_name("127.0.0.1:8000") == "127.0.0.1" and host_name("[::1]:8000") == "::1"
    assert host_name("LocalHost") == "localhost" and host_name("") is None
    policy = HostPolicy(["localhost", "127.0.0.1", "::1", "*.corp.example"])
    assert policy.host_ok("[::1]:9") and policy.host_ok("a.corp.example:8000")
    assert not policy.host_ok("evil.example") and not policy.host_ok(None) and not policy.host_ok("corp.example.evil")
    assert policy.origin_ok(None, "127.0.0.1:8000") and policy.origin_ok("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert not policy.origin_ok("http://evil.example", "127.0.0.1:8000") and not policy.origin_ok("null", "127.0.0.1:8000")
    assert HostPolicy(["*"]).host_ok("anything") and method_label("ZZQ7") == "OTHER" and method_label("GET") == "GET"


def test_dns_rebinding_host_and_foreign_origin_are_refused(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path), engine=inline_engine)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        rebound = c.get("/healthz", headers={"Host": "evil.example", "Origin": "http://evil.example"})
        assert rebound.status_code == 400 and rebound.json()["errors"][0]["type"] == "InvalidHost"
        assert rebound.json()["request_id"] == rebound.headers["x-request-id"]
        assert c.get("/v1/corrections/export", headers={"Host": "evil.example:8000"}).status_code == 400
        for host in ("localhost", "127.0.0.1", "[::1]"):
            assert c.get("/healthz", headers={"Host": f"{host}:{url.rsplit(':', 1)[1]}"}).status_code == 200, host
        # a page on another origin posting to the loopback name (a cross-site form): 403, nothing accepted
        cross = c.post("/v1/jobs", content=small_page(), headers={"Origin": "http://evil.example"})
        assert cross.status_code == 403 and cross.json()["errors"][0]["type"] == "ForeignOrigin"
        assert app.state.svc.store.queued_documents() == 0
        same = c.post("/v1/jobs", content=small_page(), headers={"Origin": url})
        assert same.status_code == 202
        wait_job(c, same.headers["location"])
        assert c.get("/healthz", headers={"Origin": "http://evil.example"}).status_code == 200  # reads: Host decides


def test_unknown_methods_and_unauthorized_calls_keep_metric_labels_bounded(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path), engine=inline_engine, environ={"DOCPIPE_TOKEN": "s3cret"})
    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        for method in ("ZZQ7", "ZZQ8", "PROPFIND"):
            assert c.request(method, "/healthz").status_code == 405
        denied = c.get("/v1/jobs/abc")
        assert denied.status_code == 401 and denied.headers["www-authenticate"].startswith("Bearer")
        m = metric_values(c.get("/metrics").text)
        series = [dict(k[1]) for k in m if k[0] == "docpipe_http_requests_total"]
        assert {s["method"] for s in series} <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER"}
        assert m[("docpipe_http_requests_total", (("method", "OTHER"), ("route", "/healthz"), ("status", "405")))] == 3
        assert m[("docpipe_http_requests_total", (("method", "GET"), ("route", "/v1/jobs/{job_id}"), ("status", "401")))] == 1
        assert not any(s["route"] == "unmatched" for s in series)


def test_405_keeps_allow_and_huge_path_integers_are_422_not_500(inline_engine, tmp_path, caplog):
    app = create_app(service_config(tmp_path), engine=inline_engine)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        r = c.delete("/v1/extract")
        assert r.status_code == 405 and r.headers["allow"] == "POST" and r.json()["errors"][0]["type"] == "MethodNotAllowed"
        for path in ("/v1/jobs/x/documents/99999999999999999999", "/v1/jobs/x/documents/2147483648",
                     "/v1/jobs/x/documents/0/pages/99999999999999999999", "/v1/jobs/x/documents/-1"):
            big = c.get(path)
            assert big.status_code == 422, (path, big.text)
            assert big.headers["content-type"] == "application/json" and big.json()["request_id"]
        assert c.get("/v1/jobs/x/documents/2147483647").status_code == 404
        assert c.post("/v1/jobs/x/documents/99999999999999999999/corrections", json={"fields": {}}).status_code == 422


def test_unhandled_error_is_one_envelope_with_request_id_and_a_logged_traceback(inline_engine, tmp_path, caplog):
    app = create_app(service_config(tmp_path), engine=inline_engine)
    store = app.state.svc.store

    def broken(*_a, **_k):
        raise ZeroDivisionError("a value that must not reach the log")

    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        store.review_queue = broken  # the store method the route calls raises something no route expects
        with caplog.at_level(logging.ERROR, logger="pipeline.service"):
            r = c.get("/v1/review/queue", headers={"X-Request-Id": "probe-1"})
    assert r.status_code == 500 and r.json() == {"status": 500, "request_id": "probe-1", "errors": [
        {"stage": "service", "type": "Internal", "message": "internal error; see the log for request probe-1"}]}
    rec = next(x for x in caplog.records if x.getMessage() == "unhandled error")
    assert rec.exc_info[0] is ZeroDivisionError and rec.request_id == "probe-1"
    from pipeline.service.logs import JsonFormatter

    line = JsonFormatter().format(rec)
    assert '"exception": "ZeroDivisionError"' in line and "broken" in line and "must not reach" not in line


def test_correction_body_cap_and_admission_before_the_body(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path, max_json_bytes=4096, max_in_flight=1,
                                    input={"max_file_bytes": 50_000}), engine=inline_engine)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        big = {"fields": {"insurer": "x" * 10_000}}
        r = c.post("/v1/jobs/x/documents/0/corrections", json=big)
        assert r.status_code == 413 and r.json()["errors"][0]["type"] == "PayloadTooLarge"

        def chunks():
            for _ in range(10):
                yield b"{" + b" " * 1000

        chunked = c.post("/v1/jobs/x/documents/0/corrections", content=chunks(), headers={"Content-Type": "application/json"})
        assert chunked.status_code == 413
        # the one admission slot taken by a document in the engine: a body over max_file_bytes gets 429, not 413,
        # so the admission is decided before the body is read
        done = threading.Event()

        def hold():
            with httpx.Client(base_url=url, timeout=300) as c2:
                c2.post("/v1/extract", content=small_page())
            done.set()

        t = threading.Thread(target=hold)
        t.start()
        while app.state.svc.admission.used == 0 and not done.is_set():
            time.sleep(0.005)
        busy = c.post("/v1/extract", content=b"\0" * 60_000)
        t.join()
        assert done.is_set()
        assert busy.status_code == 429, busy.text  # (had the engine been free: 413, see test_app)


def test_x_filename_is_utf8_and_docs_are_served_locally(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path), engine=inline_engine)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        pct = c.post("/v1/extract", content=b"not an image", headers={"X-Filename": "%E4%BF%9D%E5%8D%95.png"})
        assert pct.json()["source"] == "保单.png"
        raw = c.post("/v1/extract", content=b"not an image", headers={"X-Filename": "保单 2.png".encode()})
        assert raw.json()["source"] == "保单 2.png"
        html = c.get("/docs").text
        assert "/docs-assets/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
        assert c.get("/docs-assets/swagger-ui-bundle.js").status_code == 200
        assert c.get("/docs-assets/swagger-ui.css").status_code == 200
        spec = c.get("/openapi.json").json()
        assert spec["components"]["securitySchemes"]["bearer"] == {
            "type": "http", "scheme": "bearer", "description": spec["components"]["securitySchemes"]["bearer"]["description"]}
        assert spec["security"] == [{"bearer": []}] and spec["paths"]["/healthz"]["get"]["security"] == []
        err = spec["paths"]["/v1/extract"]["post"]["responses"]["429"]["content"]["application/json"]["schema"]
        assert err == {"$ref": "#/components/schemas/ErrorEnvelope"} and "ErrorEnvelope" in spec["components"]["schemas"]
        ok = spec["paths"]["/v1/jobs"]["post"]["responses"]["202"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": "#/components/schemas/Job"} and "Result" in spec["components"]["schemas"]
