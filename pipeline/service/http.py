"""The request middleware of the service, in order: request id, Host check (DNS rebinding), Origin check on
state-changing methods (cross-site requests), bearer auth, the route, a catch-all for anything the route
raised (the error envelope with the request id; the traceback logged, never a value), then bounded metric
labels and the JSON access log line."""
from __future__ import annotations

import logging
import time
import uuid
from typing import Iterable, Iterator, Optional
from urllib.parse import urlsplit

from fastapi import Request
from starlette.routing import Match

from pipeline.service.errors import ServiceError
from stages.contracts.types import StageError

log = logging.getLogger("pipeline.service")

# metric and log labels: anything else is OTHER, so a client cannot open new series with made-up methods
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def method_label(method: str) -> str:
    return method if method in METHODS else "OTHER"


def route_label(request: Request) -> str:
    """The template of the route the request matched (``/v1/jobs/{job_id}``), looked up again when the request
    was answered before routing (401, 403); ``unmatched`` only when no route's path matches."""
    route = request.scope.get("route")
    if route is not None:
        return getattr(route, "path", "unmatched")
    partial = None
    for candidate in _leaf_routes(request.app.router.routes):
        match, _ = candidate.matches(request.scope)
        if match == Match.FULL:
            return candidate.path
        if match == Match.PARTIAL and partial is None:  # the path matches, the method does not (405)
            partial = candidate.path
    return partial or "unmatched"


def _leaf_routes(routes) -> Iterator:
    """Routes with a path template; routers included without a prefix are walked into (FastAPI keeps them
    as one entry holding ``original_router``)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _leaf_routes(inner.routes)
        elif isinstance(getattr(route, "path", None), str):
            yield route


def host_name(host_header: str) -> Optional[str]:
    """``example.com:8000`` -> ``example.com``; ``[::1]:8000`` -> ``::1``; None for an empty or bad header."""
    host = host_header.strip().lower()
    if not host:
        return None
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 1 else None
    if host.count(":") > 1:  # a bare IPv6 address (not valid in Host, accepted as sent)
        return host
    return host.split(":", 1)[0] or None


class HostPolicy:
    """Which Host headers and Origins a request may carry."""

    def __init__(self, allowed_hosts: Iterable[str], allowed_origins: Iterable[str] = ()):
        self.hosts = frozenset(h.strip().lower().strip("[]") for h in allowed_hosts)
        self.origins = frozenset(o.strip().lower().rstrip("/") for o in allowed_origins)

    def host_ok(self, host_header: Optional[str]) -> bool:
        if "*" in self.hosts:
            return True
        name = host_name(host_header or "")
        if name is None:
            return False
        return name in self.hosts or any(p.startswith("*.") and name.endswith(p[1:]) for p in self.hosts)

    def origin_ok(self, origin: Optional[str], host_header: Optional[str]) -> bool:
        """No Origin (curl, scripts) or the service's own origin, or one configured."""
        if origin is None:
            return True
        origin = origin.strip().lower().rstrip("/")
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc == (host_header or "").lower()


def request_id_of(request: Request) -> str:
    rid = request.headers.get("x-request-id") or uuid.uuid4().hex
    if len(rid) > 64 or not rid.isascii() or not rid.isprintable():
        rid = uuid.uuid4().hex
    return rid


def install(app, svc, error_response) -> None:
    """Add the middleware to ``app``; ``error_response(status, [StageError], request_id, ...)`` builds envelopes."""
    hosts: HostPolicy = svc.hosts
    metrics = svc.metrics

    @app.middleware("http")
    async def request_context(request: Request, call_next):
        rid = request_id_of(request)
        request.state.request_id = rid
        t0 = time.perf_counter()
        try:
            host = request.headers.get("host")
            if not hosts.host_ok(host):
                raise ServiceError(400, "InvalidHost", "the Host header names no host this service answers as "
                                   "(service.allowed_hosts)")
            if request.method in UNSAFE and not hosts.origin_ok(request.headers.get("origin"), host):
                raise ServiceError(403, "ForeignOrigin", "requests from another origin may not change state "
                                   "(service.allowed_origins)")
            svc.auth.check(request.url.path, request.headers.get("authorization"))
            response = await call_next(request)
        except ServiceError as exc:  # raised before routing
            response = error_response(exc.status, [exc.error], rid, exc.retry_after)
        except Exception as exc:  # anything a route did not handle: one envelope, a logged traceback
            log.error("unhandled error", exc_info=True, extra={"request_id": rid, "error_types": [type(exc).__name__]})
            response = error_response(500, [StageError("service", "Internal", "internal error; see the log for "
                                                       f"request {rid}")], rid)
        route = route_label(request)
        method = method_label(request.method)
        elapsed = time.perf_counter() - t0
        response.headers["X-Request-Id"] = rid
        metrics.requests.labels(method, route, str(response.status_code)).inc()
        metrics.request_seconds.labels(route).observe(elapsed)
        log.info("request", extra={"request_id": rid, "method": method, "route": route,
                                   "status": response.status_code, "duration_ms": round(elapsed * 1000.0, 1)})
        return response
