"""The FastAPI application: builds the service's parts (job store, engine holder, admission, metrics,
job runner, auth), installs the request middleware (request id, auth, metrics, JSON access log) and the
one error envelope, and mounts the routes (``routes.py``, ``review.py``)."""
from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipeline.service.auth import AuthPolicy, resolve_auth
from pipeline.service.errors import ServiceError, envelope
from pipeline.service.jobs import Claimed, JobDatabase, outcome_of
from pipeline.service.limits import Admission
from pipeline.service.metrics import ServiceMetrics, reason_labels
from pipeline.service.job_runner import EngineHolder, JobRunner
from stages.contracts.fields import FIELD_KEYS
from stages.contracts.config import DocpipeConfig
from stages.contracts.types import StageError

log = logging.getLogger("pipeline.service")

DB_NAME = "jobs.sqlite3"


@dataclass
class Service:
    """Everything a route needs, on ``app.state.svc``."""

    config: DocpipeConfig
    store: JobDatabase
    holder: EngineHolder
    admission: Admission
    metrics: ServiceMetrics
    runner: JobRunner
    auth: AuthPolicy
    field_keys: tuple[str, ...]

    def record(self, result: dict, seconds: float, *, request_id: Optional[str] = None, job_id: Optional[str] = None,
               doc_index: Optional[int] = None, sha256: Optional[str] = None) -> None:
        """Count a finished document and log it -- reasons as kind:field, errors by type, never a value."""
        outcome = outcome_of(result)
        self.metrics.observe_result(outcome, result)
        reasons = [":".join(p for p in reason_labels(str(r), self.metrics.field_keys, self.metrics.stages) if p)
                   for r in result.get("review_reasons", ())]
        extra: dict[str, Any] = {"outcome": outcome, "duration_ms": round(seconds * 1000.0, 1), "reasons": reasons,
                                 "error_types": [f"{e.get('stage')}:{e.get('type')}" for e in result.get("errors", ())]}
        for key, value in (("request_id", request_id), ("job_id", job_id), ("doc_index", doc_index), ("sha256", sha256)):
            if value is not None:
                extra[key] = value
        log.info("document", extra=extra)


def _default_engine_factory(config: DocpipeConfig) -> Callable[[], Any]:
    def build():
        from pipeline.core.engine import Engine

        return Engine(config)

    return build


def create_app(config: DocpipeConfig, *, host: Optional[str] = None, engine: Any = None,
               engine_factory: Optional[Callable[[], Any]] = None, environ: Optional[Mapping[str, str]] = None) -> FastAPI:
    """The app for a bind address (``host``, default ``service.host``). ``engine``: a ready engine the app
    uses and never closes (tests); otherwise ``engine_factory`` (default: ``Engine(config)``) builds one at
    start-up in a background thread. Raises ValueError for a non-loopback bind without a token."""
    sc = config.service
    auth = resolve_auth(host or sc.host, sc.token, os.environ if environ is None else environ)
    field_keys = FIELD_KEYS
    holder = EngineHolder(factory=None if engine is not None else (engine_factory or _default_engine_factory(config)),
                          engine=engine)
    store = JobDatabase(Path(sc.data_dir) / DB_NAME, field_keys)
    admission = Admission(0)

    def depths() -> dict[str, int]:
        return {"engine": holder.queue_depth(), "in_flight": admission.used, "jobs": store.queued_documents()}

    metrics = ServiceMetrics(field_keys, depths)

    def on_job_result(doc: Claimed, result: dict, seconds: float) -> None:  # runs once svc exists
        svc.record(result, seconds, job_id=doc.job_id, doc_index=doc.idx, sha256=doc.sha256)

    runner = JobRunner(store, holder, admission, cap=0, on_result=on_job_result, retention_s=sc.retention_hours * 3600)
    svc = Service(config, store, holder, admission, metrics, runner, auth, field_keys)

    def size_admission() -> None:
        """Once the engine is up: the admission capacity and the job runner's share of it."""
        eng = holder.engine
        credit = eng.n_workers * 2 * config.engine.max_batch
        admission.capacity = sc.max_in_flight or eng.max_in_flight
        runner.cap = min(sc.job_in_flight or credit, admission.capacity)
        runner.wake()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        interrupted = store.recover()
        log.info("job store opened", extra={"interrupted": interrupted})
        holder.start()

        def when_ready():
            while not holder.wait(1.0):
                if holder.error:
                    return
            size_admission()

        threading.Thread(target=when_ready, daemon=True, name="docpipe-admission").start()
        runner.start()
        try:
            yield
        finally:
            runner.stop()
            holder.close()
            store.close()
            log.info("service stopped")

    app = FastAPI(title="docpipe", version="1", lifespan=lifespan,
                  description="OCR -> NER extraction of Chinese insurance policies (schema-v1 results). See docs/service.md.")
    app.state.svc = svc

    @app.middleware("http")
    async def request_context(request: Request, call_next):
        rid = request.headers.get("x-request-id") or uuid.uuid4().hex
        if len(rid) > 64 or not rid.isascii():
            rid = uuid.uuid4().hex
        request.state.request_id = rid
        t0 = time.perf_counter()
        try:
            auth.check(request.url.path, request.headers.get("authorization"))
            response = await call_next(request)
        except ServiceError as exc:  # raised before routing (auth)
            response = error_response(exc.status, [exc.error], rid, exc.retry_after)
        route = getattr(request.scope.get("route"), "path", None) or "unmatched"
        elapsed = time.perf_counter() - t0
        response.headers["X-Request-Id"] = rid
        metrics.requests.labels(request.method, route, str(response.status_code)).inc()
        metrics.request_seconds.labels(route).observe(elapsed)
        log.info("request", extra={"request_id": rid, "method": request.method, "route": route,
                                   "status": response.status_code, "duration_ms": round(elapsed * 1000.0, 1)})
        return response

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        if exc.status in (413, 429, 503):
            metrics.rejected.labels(exc.error.type).inc()
        return error_response(exc.status, [exc.error], _rid(request), exc.retry_after)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
        return error_response(exc.status_code, [StageError("service", kind, str(exc.detail))], _rid(request))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        errs = [StageError("service", "InvalidRequest", f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}")
                for e in exc.errors()]
        return error_response(422, errs, _rid(request))

    from fastapi.staticfiles import StaticFiles

    from pipeline.service import review, routes

    app.include_router(routes.router)
    app.include_router(review.router)
    app.mount("/static", StaticFiles(directory=review.STATIC_DIR), name="static")
    return app


def _rid(request: Request) -> str:
    return getattr(request.state, "request_id", "")


def error_response(status: int, errors: list[StageError], request_id: str, retry_after: Optional[int] = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse(envelope(status, errors, request_id), status_code=status, headers=headers)
