"""What ``batch`` and ``watch`` need from an engine, and helpers for the records it yields.

A *backend* is anything with ``extract_many(sources, ordered=True) -> Iterator[dict]`` that yields one
schema-v1 result per source, in order, and never raises for a bad input. ``--backend NAME`` chooses one
from :data:`BACKENDS`: ``engine`` (:class:`pipeline.core.engine.Engine`, the default) or ``decode-only``
(:class:`DecodeOnlyBackend`). Python callers may pass any factory (``config -> backend``) directly.
"""
from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, Iterable, Iterator, Literal, Protocol

from stages.contracts.config import DocpipeConfig
from stages.contracts.result import build_result, error_result, page_json
from pipeline.core.sources import DecodeError, open_pages
from stages.contracts.fields import FIELD_KEYS
from stages.contracts.types import Source, StageError, source_name

Outcome = Literal["ok", "needs_review", "failed"]



class Backend(Protocol):
    def extract_many(self, sources: Iterable[Source], ordered: bool = True) -> Iterator[dict]: ...


BackendFactory = Callable[[DocpipeConfig], Any]


def build_engine(config: DocpipeConfig) -> Backend:
    """The real engine. Imported only when chosen: building it loads Paddle and the models."""
    from pipeline.core.engine import Engine

    return Engine(config)


class DecodeOnlyBackend:
    """Decodes each input with :func:`pipeline.core.sources.open_pages`, a page at a time, and nothing more
    (no models).

    The record is schema v1: each page with its ``width`` and ``height`` and no ``lines``, every field
    null, ``needs_review`` true with the reason ``decode_only``; an input that cannot be decoded gets the
    usual ``decode`` error. For checking that a folder of scans is readable before a real run."""

    REVIEW_REASON = "decode_only"

    def __init__(self, config: DocpipeConfig) -> None:
        self.config = config

    def extract_many(self, sources: Iterable[Source], ordered: bool = True) -> Iterator[dict]:
        for index, source in enumerate(sources):  # one at a time: results are always in order
            yield self.decode(source, index)

    def decode(self, source: Source, index: int = 0) -> dict:
        name = source_name(source, index)
        t0 = time.perf_counter()
        try:
            with open_pages(source, self.config.input, name=name) as doc:
                pages = [page_json(p, []) for p in doc]  # each page's pixels freed before the next is decoded
        except DecodeError as exc:
            return error_result(name, exc.as_stage_error(), _timings(t0))
        except Exception as exc:  # never let one input stop the others
            error = StageError("decode", type(exc).__name__, f"{name}: {exc}")
            return error_result(name, error, _timings(t0))
        return build_result(
            name, pages, {k: None for k in FIELD_KEYS}, [], _timings(t0),
            review_reasons=[self.REVIEW_REASON],
        )


def _timings(t0: float) -> dict[str, float]:
    ms = (time.perf_counter() - t0) * 1000.0
    return {"decode": ms, "total": ms}


#: The backends ``--backend`` may name. Checked when the arguments are parsed.
BACKENDS: dict[str, BackendFactory] = {
    "engine": build_engine,
    "decode-only": DecodeOnlyBackend,
}

#: The ``--backend`` used when none is given.
DEFAULT_BACKEND = "engine"


@contextlib.contextmanager
def open_backend(factory: BackendFactory, config: DocpipeConfig) -> Iterator[Backend]:
    """Build a backend and, if it is a context manager (the Engine is), enter and exit it."""
    obj = factory(config)
    if hasattr(obj, "__enter__") and hasattr(obj, "__exit__"):
        with obj as entered:  # type: ignore[union-attr]
            yield entered if entered is not None else obj
    else:
        try:
            yield obj
        finally:
            close = getattr(obj, "close", None)
            if callable(close):
                close()


def outcome_of(record: dict) -> Outcome:
    """``failed`` when the record has errors, else ``needs_review`` or ``ok``."""
    if record.get("errors"):
        return "failed"
    return "needs_review" if record.get("needs_review") else "ok"


def error_record(source: str, stage: str, type: str, message: str) -> dict:  # noqa: A002
    """A schema-v1 record for a document that failed outside the engine (e.g. the engine itself raised)."""
    return error_result(source, StageError(stage, type, message), {})
