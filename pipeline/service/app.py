"""The FastAPI application: builds the service's parts (job store, engine holder, admission, metrics,
job runner, auth) after taking the data folder's lock, installs the request middleware (``http.py``) and the
one error envelope, and mounts the routes (``routes.py``, ``review.py``) and the API docs (``apidocs.py``)."""
from __future__ import annotations

import asyncio
import logging
import os
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipeline.service import http
from pipeline.service.auth import AuthPolicy, resolve_auth
from pipeline.service.datadir import DataDirLock, data_dir_of
from pipeline.service.http import HostPolicy
from pipeline.service.errors import ServiceError, envelope
from pipeline.service.jobs import Claimed, JobDatabase, outcome_of
from pipeline.service.limits import Admission, BodyCap
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
    hosts: HostPolicy
    lock: DataDirLock
    page_renders: asyncio.Semaphore  # review page images decoded at once (one page each)

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
    start-up in a background thread. Raises ValueError for a non-loopback bind without a token, and
    :class:`~pipeline.service.datadir.DataDirBusy` (before the job store is opened) when another instance
    holds the data folder; the app holds that lock until it stops."""
    sc = config.service
    bind = host or sc.host
    auth = resolve_auth(bind, sc.token, os.environ if environ is None else environ)
    data_dir = data_dir_of(sc.data_dir)
    lock = DataDirLock(data_dir).acquire()
    field_keys = FIELD_KEYS
    holder = EngineHolder(factory=None if engine is not None else (engine_factory or _default_engine_factory(config)),
                          engine=engine)
    try:
        store = JobDatabase(data_dir / DB_NAME, field_keys)
    except BaseException:
        lock.release()
        raise
    admission = Admission(0)

    def depths() -> dict[str, int]:
        return {"engine": holder.queue_depth(), "in_flight": admission.used, "jobs": store.queued_documents()}

    metrics = ServiceMetrics(field_keys, depths)

    def on_job_result(doc: Claimed, result: dict, seconds: float) -> None:  # runs once svc exists
        svc.record(result, seconds, job_id=doc.job_id, doc_index=doc.idx, sha256=doc.sha256)

    runner = JobRunner(store, holder, admission, cap=0, on_result=on_job_result, retention_s=sc.retention_hours * 3600,
                       correction_retention_s=sc.correction_retention_days * 86400)
    # the bind address itself is a name clients may use (an explicit interface, not 0.0.0.0 / ::)
    allowed = list(sc.allowed_hosts) + ([bind] if bind not in ("0.0.0.0", "::", "") else [])
    svc = Service(config, store, holder, admission, metrics, runner, auth, field_keys, HostPolicy(allowed, sc.allowed_origins),
                  lock, asyncio.Semaphore(sc.page_renders))

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
            lock.release()
            log.info("service stopped")

    app = FastAPI(title="docpipe", version="1", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="OCR -> NER extraction of Chinese insurance policies (schema-v1 results). See docs/service.md.")
    app.state.svc = svc
    from pipeline.service.routes import UPLOAD_PATHS

    app.add_middleware(BodyCap, limit=sc.max_json_bytes, exempt=UPLOAD_PATHS)  # inside the request middleware
    http.install(app, svc, error_response)

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        if exc.status in (413, 429, 503):
            metrics.rejected.labels(exc.error.type).inc()
        return error_response(exc.status, [exc.error], _rid(request), exc.retry_after)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        kind = {404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLarge"}.get(exc.status_code, "HTTPError")
        if exc.status_code == 413:
            metrics.rejected.labels(kind).inc()
        return error_response(exc.status_code, [StageError("service", kind, str(exc.detail))], _rid(request),
                              headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        errs = [StageError("service", "InvalidRequest", f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}")
                for e in exc.errors()]
        return error_response(422, errs, _rid(request))

    from fastapi.staticfiles import StaticFiles

    from pipeline.service import apidocs, review, routes

    app.include_router(routes.router)
    app.include_router(review.router)
    app.mount("/static", StaticFiles(directory=review.STATIC_DIR), name="static")
    apidocs.install(app)
    return app


def _rid(request: Request) -> str:
    return getattr(request.state, "request_id", "")


def error_response(status: int, errors: list[StageError], request_id: str, retry_after: Optional[int] = None,
                   headers: Optional[Mapping[str, str]] = None) -> JSONResponse:
    out = dict(headers or {})
    if retry_after is not None:
        out["Retry-After"] = str(retry_after)
    if status == 401:
        out["WWW-Authenticate"] = 'Bearer realm="docpipe"'
    return JSONResponse(envelope(status, errors, request_id), status_code=status, headers=out or None)
