"""The API description: OpenAPI with a bearer ``securitySchemes`` (Swagger's Authorize button), the error
envelope as a schema on every operation, and ``/docs`` served from Swagger UI assets installed with the
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
_ERRORS = {"400": "bad request (InvalidHost, BadMultipart, NoDocument, ...)", "401": "missing or wrong bearer token",
           "403": "a foreign Origin on a state-changing request", "404": "no such job, document or page",
           "413": "body over its limit", "422": "invalid parameters or body", "429": "engine queue full",
           "500": "internal error", "503": "not ready, or the job backlog is full"}


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    comps = schema.setdefault("components", {})
    comps.setdefault("schemas", {})["ErrorEnvelope"] = ERROR_ENVELOPE
    comps["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "DOCPIPE_TOKEN or service.token (required off loopback)"}}
    schema["security"] = [{"bearer": []}]
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
    for path, ops in schema.get("paths", {}).items():
        for op in ops.values():
            if path in OPEN_PATHS:
                op["security"] = []
            responses = op.setdefault("responses", {})
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
