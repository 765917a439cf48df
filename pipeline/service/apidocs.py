"""The API description: OpenAPI with a bearer ``securitySchemes`` (Swagger's Authorize button), the error
envelope as a schema on every operation, schemas of the result and job bodies, and ``/docs`` served from Swagger UI assets installed with the
``swagger-ui-bundle`` package (nothing loaded from a CDN, so the page works offline)."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.staticfiles import StaticFiles

from pipeline.service.auth import OPEN_PATHS

ASSETS = "/docs-assets"

ERROR_ENVELOPE = {
    "type": "object",
    "required": ["status", "request_id", "errors"],
    "properties": {
        "status": {"type": "integer", "description": "the HTTP status, repeated"},
        "request_id": {"type": "string", "description": "also in the X-Request-Id header and the log"},
        "errors": {"type": "array", "items": {"type": "object", "required": ["stage", "type", "message"], "properties": {
            "stage": {"type": "string"}, "type": {"type": "string", "description": "machine-readable kind"},
            "message": {"type": "string"}}}},
    },
}
_RESULT = {
    "type": "object", "description": "a schema-v1 result",
    "required": ["schema_version", "source", "pages", "fields", "needs_review", "review_reasons", "errors"],
    "properties": {
        "schema_version": {"type": "string"}, "source": {"type": "string"},
        "pages": {"type": "array", "items": {"type": "object"}},
        "fields": {"type": "object", "additionalProperties": {"type": ["object", "null"]}},
        "needs_review": {"type": "boolean"}, "review_reasons": {"type": "array", "items": {"type": "string"}},
        "errors": {"type": "array", "items": {"type": "object"}}, "timings_ms": {"type": "object"},
    },
}
_JOB = {"type": "object", "required": ["id", "status"], "properties": {
    "id": {"type": "string"}, "status": {"type": "string", "enum": ["queued", "running", "succeeded", "failed"]},
    "documents": {"type": "integer"}, "created": {"type": "number"}, "finished": {"type": ["number", "null"]},
    "document_status": {"type": "object"}, "outcomes": {"type": "object"}, "results": {"type": "string"}}}
_JOB_RESULTS = {"type": "object", "required": ["id", "status", "results"], "properties": {
    "id": {"type": "string"}, "status": {"type": "string"},
    "results": {"type": "array", "items": {"$ref": "#/components/schemas/Result"}}}}
# (path, method, status) -> schema name of the success body
_SUCCESS = {("/v1/extract", "post", "200"): "Result", ("/v1/jobs", "post", "202"): "Job",
            ("/v1/jobs/{job_id}", "get", "200"): "Job", ("/v1/jobs/{job_id}/results", "get", "200"): "JobResults"}
_ERRORS = {"400": "bad request (InvalidHost, BadMultipart, NoDocument, ...)", "401": "missing or wrong bearer token",
           "403": "a foreign Origin on a state-changing request", "404": "no such job, document or page",
           "413": "body over its limit", "422": "invalid parameters or body", "429": "engine queue full",
           "500": "internal error", "503": "not ready, or the job backlog is full"}


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    comps = schema.setdefault("components", {})
    comps.setdefault("schemas", {}).update(ErrorEnvelope=ERROR_ENVELOPE, Result=_RESULT, Job=_JOB, JobResults=_JOB_RESULTS)
    comps["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "DOCPIPE_TOKEN or service.token (required off loopback)"}}
    schema["security"] = [{"bearer": []}]
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
    for path, ops in schema.get("paths", {}).items():
        for method, op in ops.items():
            if path in OPEN_PATHS:
                op["security"] = []
            responses = op.setdefault("responses", {})
            for (p, m, code), name in _SUCCESS.items():
                if (p, m) == (path, method):
                    ok = responses.setdefault(code, {"description": "success"})
                    ok["content"] = {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}
            for code, text in _ERRORS.items():
                if code == "401" and path in OPEN_PATHS:
                    continue
                entry = responses.setdefault(code, {"description": text})
                entry["content"] = ref
    app.openapi_schema = schema
    return schema


def install(app: FastAPI) -> None:
    """``/docs`` (Swagger UI from local assets) and the OpenAPI generator; call on an app made with
    ``docs_url=None, redoc_url=None``."""
    from swagger_ui_bundle import swagger_ui_path

    app.openapi = lambda: openapi_schema(app)
    app.mount(ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs():
        return get_swagger_ui_html(openapi_url=app.openapi_url, title=f"{app.title} API",
                                   swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{ASSETS}/favicon-32x32.png")
