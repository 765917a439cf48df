"""Upload limits counted on the bytes actually streamed (a chunked upload without Content-Length is held
to them too), and the admission counter that bounds how many documents the service keeps in the engine."""
from __future__ import annotations

import threading
from typing import AsyncIterator, Iterable
from urllib.parse import unquote

from starlette.datastructures import UploadFile
from fastapi import HTTPException
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from pipeline.service.errors import ServiceError

# multipart framing (boundaries, part headers) allowed on top of the file bytes of POST /v1/extract
MULTIPART_OVERHEAD = 64 * 1024


async def counted(stream: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    """Pass chunks through; raise 413 as soon as more than ``limit`` bytes have arrived."""
    seen = 0
    async for chunk in stream:
        seen += len(chunk)
        if seen > limit:
            raise ServiceError(413, "PayloadTooLarge", f"request body is over the limit of {limit} bytes")
        yield chunk


async def read_documents(request: Request, *, file_limit: int, body_limit: int, max_files: int) -> list[tuple[str, bytes]]:
    """The documents of a request: every file part of a multipart form, or the raw body (named by the
    ``filename`` query parameter or ``X-Filename`` header). Each file is held to ``file_limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > body_limit:  # refused before reading; chunked bodies are counted below
        raise ServiceError(413, "PayloadTooLarge", f"request body is over the limit of {body_limit} bytes")
    ctype = request.headers.get("content-type", "")
    if ctype.startswith("multipart/form-data"):
        parser = MultiPartParser(request.headers, counted(request.stream(), body_limit),
                                 max_files=max_files, max_fields=16)
        try:
            form = await parser.parse()
        except MultiPartException as exc:
            raise ServiceError(400, "BadMultipart", str(exc)) from exc
        docs = []
        try:
            for _, value in form.multi_items():
                if isinstance(value, UploadFile):
                    data = await value.read()
                    if len(data) > file_limit:
                        raise ServiceError(413, "PayloadTooLarge",
                                           f"a file is over input.max_file_bytes ({file_limit} bytes)")
                    docs.append((value.filename or f"upload-{len(docs)}", data))
        finally:
            await form.close()
        if not docs:
            raise ServiceError(400, "NoDocument", "the multipart form holds no file part")
        return docs
    chunks = [c async for c in counted(request.stream(), min(file_limit, body_limit))]
    data = b"".join(chunks)
    if not data:
        raise ServiceError(400, "NoDocument", "empty request body")
    name = request.query_params.get("filename") or header_filename(request.headers.get("x-filename")) or "upload"
    return [(name, data)]


def header_filename(value: str | None) -> str | None:
    """``X-Filename`` as UTF-8: percent-encoded (``%E4%BF%9D.png``) or raw UTF-8 bytes (which the server hands
    over as Latin-1 text)."""
    if not value:
        return None
    try:
        raw = value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        raw = value
    return unquote(raw, errors="replace") or None


class BodyCap:
    """ASGI middleware: a request body (other than the upload routes in ``exempt``, which count their own) is
    refused with 413 past ``limit`` bytes -- declared in Content-Length or counted as it streams."""

    def __init__(self, app, limit: int, exempt: Iterable[str] = ()):
        self.app = app
        self.limit = limit
        self.exempt = frozenset(exempt)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("path") in self.exempt:
            return await self.app(scope, receive, send)
        limit, seen = self.limit, 0

        async def capped():
            nonlocal seen
            for key, value in scope.get("headers", ()):
                if key == b"content-length" and value.isdigit() and int(value) > limit:
                    raise HTTPException(413, f"request body is over the limit of {limit} bytes (service.max_json_bytes)")
            message = await receive()
            if message.get("type") == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, f"request body is over the limit of {limit} bytes (service.max_json_bytes)")
            return message

        return await self.app(scope, capped, send)


class Admission:
    """A non-blocking counter of documents inside the engine: ``try_acquire`` fails at capacity."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._used = 0
        self._lock = threading.Lock()

    def try_acquire(self, n: int = 1) -> bool:
        with self._lock:
            if self._used + n > self.capacity:
                return False
            self._used += n
            return True

    def release(self, n: int = 1) -> None:
        with self._lock:
            self._used = max(0, self._used - n)

    @property
    def used(self) -> int:
        with self._lock:
            return self._used
