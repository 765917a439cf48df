"""API routes: synchronous extraction, durable jobs, health/readiness and metrics. Engine calls and SQLite
work run in the thread pool, never on the event loop."""
from __future__ import annotations

import asyncio
import hashlib
import logging
import time

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool

from pipeline.core.engine import EngineError
from pipeline.service.errors import ServiceError
from pipeline.service.limits import MULTIPART_OVERHEAD, read_documents
from pipeline.service.params import JobId

log = logging.getLogger("pipeline.service")
router = APIRouter()
# the routes that take documents and hold their bodies to input.max_file_bytes / service.max_request_bytes
# themselves; every other body is held to service.max_json_bytes (limits.BodyCap)
UPLOAD_PATHS = ("/v1/extract", "/v1/jobs")

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {"schema": {"type": "object", "properties": {
                "file": {"type": "array", "items": {"type": "string", "format": "binary"}}}}},
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


def _svc(request: Request):
    return request.app.state.svc


def not_ready(svc) -> str | None:
    """Why the service cannot take work now (models not loaded or failed, job runner down), or None."""
    if not svc.holder.ready or not svc.admission.capacity:
        return svc.holder.error or "the models are still loading"
    return svc.runner.trouble()


def _ready_engine(svc):
    reason = not_ready(svc)
    if reason is not None:
        raise ServiceError(503, "NotReady", reason, retry_after=svc.config.service.retry_after_s)
    return svc.holder.engine


@router.post("/v1/extract", summary="Extract one document (multipart file or raw body) into its schema-v1 result",
             openapi_extra=_UPLOAD_BODY, responses={413: {"description": "over input.max_file_bytes"},
                                                    429: {"description": "engine queue full; see Retry-After"}})
async def extract(request: Request):
    svc = _svc(request)
    engine = _ready_engine(svc)
    limit = svc.config.input.max_file_bytes
    # admitted before the body is read: a full engine answers 429 without taking the upload into memory
    if not svc.admission.try_acquire():
        raise ServiceError(429, "QueueFull", "the engine queue is full; retry later",
                           retry_after=svc.config.service.retry_after_s)
    t0 = time.perf_counter()
    try:
        docs = await read_documents(request, file_limit=limit, body_limit=limit + MULTIPART_OVERHEAD, max_files=1)
        if len(docs) != 1:
            raise ServiceError(400, "OneDocument", "POST /v1/extract takes exactly one document; use /v1/jobs for more")
        name, data = docs[0]
        fut = await run_in_threadpool(engine.submit, data, name)
    except BaseException:
        svc.admission.release()
        raise
    fut.add_done_callback(lambda _f: svc.admission.release())
    try:
        # shielded: a client that disconnects does not cancel the engine's future, so the admission slot is
        # released only when the engine has really finished the document
        result = await asyncio.shield(asyncio.wrap_future(fut))
    except EngineError as exc:
        raise ServiceError(503, "EngineStopped", str(exc), retry_after=svc.config.service.retry_after_s) from exc
    sha = hashlib.sha256(data).hexdigest()
    svc.record(result, time.perf_counter() - t0, request_id=request.state.request_id, sha256=sha)
    return JSONResponse(result)


@router.post("/v1/jobs", status_code=202, summary="Queue one or more documents; poll the Location",
             openapi_extra=_UPLOAD_BODY, responses={503: {"description": "job backlog full; see Retry-After"}})
async def create_job(request: Request):
    svc = _svc(request)
    sc = svc.config.service
    _ready_engine(svc)  # a job accepted now could not run: say so (503) rather than queue it
    queued = await run_in_threadpool(svc.store.queued_documents)
    if queued >= sc.max_queued_documents:
        raise ServiceError(503, "JobQueueFull", f"{queued} documents are waiting; retry later", retry_after=sc.retry_after_s)
    docs = await read_documents(request, file_limit=svc.config.input.max_file_bytes, body_limit=sc.max_request_bytes,
                                max_files=sc.max_documents_per_job)
    job_id = await run_in_threadpool(svc.store.create_job, docs)
    svc.runner.wake()
    log.info("job accepted", extra={
        "request_id": request.state.request_id, "job_id": job_id, "documents": len(docs)})
    return JSONResponse({"id": job_id, "status": "queued", "documents": len(docs)}, status_code=202,
                        headers={"Location": f"/v1/jobs/{job_id}", "Retry-After": str(sc.retry_after_s)})


async def _job_or_404(svc, job_id: str) -> dict:
    job = await run_in_threadpool(svc.store.job, job_id)
    if job is None:
        raise ServiceError(404, "NoSuchJob", "no such job (finished jobs are kept for service.retention_hours)")
    return job


@router.get("/v1/jobs/{job_id}", summary="A job's status")
async def job_status(job_id: JobId, request: Request):
    svc = _svc(request)
    job = await _job_or_404(svc, job_id)
    headers = {}
    if job["status"] in ("queued", "running"):
        headers["Retry-After"] = str(svc.config.service.retry_after_s)
    else:
        job["results"] = f"/v1/jobs/{job_id}/results"
    return JSONResponse(job, headers=headers)


@router.get("/v1/jobs/{job_id}/results", summary="The job's results, in upload order, once it has finished")
async def job_results(job_id: JobId, request: Request):
    svc = _svc(request)
    job = await _job_or_404(svc, job_id)
    if job["status"] in ("queued", "running"):
        raise ServiceError(409, "JobNotFinished", f"the job is {job['status']}", retry_after=svc.config.service.retry_after_s)
    results = await run_in_threadpool(svc.store.results, job_id)
    return JSONResponse({"id": job_id, "status": job["status"], "results": results})


@router.get("/healthz", summary="The process is alive")
async def healthz():
    return {"status": "ok"}


@router.get("/readyz", summary="The models are loaded, the engine takes work and the job runner is alive")
async def readyz(request: Request):
    svc = _svc(request)
    reason = not_ready(svc)
    if reason is None:
        return {"status": "ready", "capacity": svc.admission.capacity}
    raise ServiceError(503, "NotReady", reason, retry_after=svc.config.service.retry_after_s)


@router.get("/metrics", summary="Prometheus metrics")
async def metrics(request: Request):
    body = await run_in_threadpool(_svc(request).metrics.render)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
