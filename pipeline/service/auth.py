"""Bearer-token auth: the token comes from ``DOCPIPE_TOKEN`` or ``service.token``; it is required whenever the
bind address is not loopback, and compared in constant time."""
from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Mapping, Optional

from pipeline.service.errors import ServiceError

TOKEN_ENV = "DOCPIPE_TOKEN"
# reachable without a token: liveness/readiness probes, Prometheus scraping, the API docs and the review
# page's static files and Swagger UI's assets (the pages' data calls carry the token)
OPEN_PATHS = frozenset({"/", "/healthz", "/readyz", "/metrics", "/docs", "/docs/oauth2-redirect", "/openapi.json", "/review"})
OPEN_PREFIXES = ("/static/", "/docs-assets/")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


@dataclass(frozen=True)
class AuthPolicy:
    token: Optional[str]

    @property
    def required(self) -> bool:
        return self.token is not None

    def check(self, path: str, authorization: Optional[str]) -> None:
        """Raise 401 unless the path is open, no token is configured, or the bearer token matches."""
        if not self.required or path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            return
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token.encode()):
            raise ServiceError(401, "Unauthorized", "a valid 'Authorization: Bearer <token>' header is required")


def resolve_auth(host: str, config_token: Optional[str], environ: Mapping[str, str]) -> AuthPolicy:
    """The policy for a bind address. A non-loopback bind without a token is refused (ValueError)."""
    token = environ.get(TOKEN_ENV) or config_token or None
    if token is None and not is_loopback(host):
        raise ValueError(f"binding {host} (not loopback) needs a token: set {TOKEN_ENV} or service.token")
    return AuthPolicy(token)
