"""Review routes: the static review page, the queue of ``needs_review`` documents, a document's result and
page images, approving (a correction record, with the OCR line spans clicked to fill its values, stored beside
the machine result) and the labels export."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import cv2
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from pipeline.core.sources import open_pages
from pipeline.service.errors import ServiceError
from pipeline.service.export import stream_zip
from pipeline.service.params import Index
from pipeline.service.review_spans import SpanError, source_spans

STATIC_DIR = Path(__file__).with_name("static")
router = APIRouter()


class SourceLine(BaseModel):
    """One OCR line of the machine result a value was taken from (click-to-fill on the review page)."""

    model_config = ConfigDict(extra="forbid")
    page: int = Field(..., ge=0, le=10_000, description="index in the result's pages")
    line: int = Field(..., ge=0, le=100_000, description="index in that page's lines")
    start: int = Field(0, ge=0, le=100_000, description="first character taken")
    end: Optional[int] = Field(None, ge=1, le=100_000, description="one past the last character; null = line end")


class Correction(BaseModel):
    """The reviewer's value for each field they approve (null = the document has no such field)."""

    model_config = ConfigDict(extra="forbid")
    fields: dict[str, Optional[str]] = Field(..., description="field key -> corrected value or null")
    sources: dict[str, list[SourceLine]] = Field(
        default_factory=dict, description="field key -> the OCR lines clicked to fill it, in click order; the "
        "stored span is narrowed to the saved value, or dropped when the value does not occur in them")


def _svc(request: Request):
    return request.app.state.svc


@router.get("/review", include_in_schema=False)
async def review_page():
    return FileResponse(STATIC_DIR / "review.html", media_type="text/html; charset=utf-8")


@router.get("/v1/review/queue", summary="needs_review documents not yet approved, oldest first")
async def review_queue(request: Request):
    items = await run_in_threadpool(_svc(request).store.review_queue)
    return {"documents": items}


@router.get("/v1/jobs/{job_id}/documents/{idx}", summary="One job document: machine result and corrections")
async def document(job_id: str, idx: Index, request: Request):
    doc = await run_in_threadpool(_svc(request).store.document, job_id, idx)
    if doc is None:
        raise ServiceError(404, "NoSuchDocument", "no such job document")
    return doc


@router.get("/v1/jobs/{job_id}/documents/{idx}/pages/{page}", summary="A page of the document as PNG, in the "
            "pixel space of the result's polygons")
async def page_image(job_id: str, idx: Index, page: Index, request: Request):
    svc = _svc(request)

    def render() -> Optional[bytes]:
        data = svc.store.input_bytes(job_id, idx)
        if data is None:
            return None
        with open_pages(data, svc.config.input, name=f"{job_id}/{idx}") as doc:  # decodes only the page asked
            if not 0 <= page < len(doc):
                return None
            ok, png = cv2.imencode(".png", doc.page(page).image)
        return png.tobytes() if ok else None

    try:
        async with svc.page_renders:  # a few pages at once, whatever the number of reviewers
            png = await run_in_threadpool(render)
    except Exception as exc:  # an input that does not decode has no page to show
        raise ServiceError(404, "NoPageImage", f"the input does not decode: {type(exc).__name__}") from exc
    if png is None:
        raise ServiceError(404, "NoSuchPage", "no such document page")
    return Response(png, media_type="image/png")


@router.post("/v1/jobs/{job_id}/documents/{idx}/corrections", status_code=201,
             summary="Approve a document: store the reviewer's field values beside the machine result")
async def add_correction(job_id: str, idx: Index, body: Correction, request: Request):
    svc = _svc(request)
    unknown = sorted(set(body.fields) - set(svc.field_keys))
    if unknown:
        raise ServiceError(422, "UnknownField", f"unknown field key(s): {', '.join(unknown)}")
    if any(v is not None and len(v) > 1000 for v in body.fields.values()):
        raise ServiceError(422, "ValueTooLong", "a field value is over 1000 characters")
    if set(body.sources) - set(body.fields):
        raise ServiceError(422, "UnknownField", "'sources' names a field that is not in 'fields'")
    spans: dict = {}
    if body.sources:
        doc = await run_in_threadpool(svc.store.document, job_id, idx)
        if doc is None or doc["status"] != "done" or doc["result"] is None:
            raise ServiceError(404, "NoSuchDocument", "no finished job document to correct")
        clicked = {k: [c.model_dump() for c in v] for k, v in body.sources.items()}
        try:
            spans = source_spans(doc["result"], body.fields, clicked)
        except SpanError as exc:
            raise ServiceError(422, "BadSourceLine", str(exc)) from None
    cid = await run_in_threadpool(svc.store.add_correction, job_id, idx, body.fields, spans)
    if cid is None:
        raise ServiceError(404, "NoSuchDocument", "no finished job document to correct")
    return JSONResponse({"id": cid, "job_id": job_id, "index": idx, "sources": spans}, status_code=201)


@router.get("/v1/corrections/export", summary="Approved corrections as a zip of the labels format "
            "(X.<ext> + X.json, docs/labels_format.md)")
async def export(request: Request):
    return StreamingResponse(stream_zip(_svc(request).store), media_type="application/zip",
                    headers={"Content-Disposition": 'attachment; filename="docpipe-labels.zip"'})
