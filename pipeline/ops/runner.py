"""What ``batch`` and ``watch`` need from an engine, and helpers for the records it yields.

A *processor* is anything with ``extract_many(sources, ordered=True) -> Iterator[dict]`` that yields one
schema-v1 result per source, in order, and never raises for a bad input. ``--processor NAME`` chooses one
from :data:`PROCESSORS`: ``engine`` (:class:`pipeline.core.engine.Engine`, the default) or ``decode-only``
(:class:`DecodeOnlyProcessor`). Python callers may pass any factory (``config -> processor``) directly.
"""
from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, Protocol, Union

import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.contracts.result import build_result, error_result, page_json
from pipeline.core.sources import DecodeError, load_pages
from stages.contracts.types import StageError

SourceLike = Union[str, Path, bytes, np.ndarray]
Outcome = Literal["ok", "needs_review", "failed"]



class Processor(Protocol):
    def extract_many(self, sources: Iterable[SourceLike], ordered: bool = True) -> Iterator[dict]: ...


ProcessorFactory = Callable[[DocpipeConfig], Any]


def build_engine(config: DocpipeConfig) -> Processor:
    """The real engine. Imported only when chosen: building it loads Paddle and the models."""
    from pipeline.core.engine import Engine

    return Engine(config)


class DecodeOnlyProcessor:
    """Decodes each input with :func:`pipeline.core.sources.load_pages` and nothing more (no models).

    The record is schema v1: each page with its ``width`` and ``height`` and no ``lines``, every field
    null, ``needs_review`` true with the reason ``decode_only``; an input that cannot be decoded gets the
    usual ``decode`` error. For checking that a folder of scans is readable before a real run."""

    REVIEW_REASON = "decode_only"

    def __init__(self, config: DocpipeConfig) -> None:
        self.config = config
        self.field_keys = field_keys()

    def extract_many(self, sources: Iterable[SourceLike], ordered: bool = True) -> Iterator[dict]:
        for index, source in enumerate(sources):  # one at a time: results are always in order
            yield self.decode(source, index)

    def decode(self, source: SourceLike, index: int = 0) -> dict:
        name = _source_name(source, index)
        t0 = time.perf_counter()
        try:
            pages = load_pages(source, self.config.input, name=name)
        except DecodeError as exc:
            return error_result(name, exc.as_stage_error(), self.field_keys, _timings(t0))
        except Exception as exc:  # never let one input stop the others
            error = StageError("decode", type(exc).__name__, f"{name}: {exc}")
            return error_result(name, error, self.field_keys, _timings(t0))
        return build_result(
            name, [page_json(p, []) for p in pages], {k: None for k in self.field_keys}, [], _timings(t0),
            review_reasons=[self.REVIEW_REASON],
        )


def _timings(t0: float) -> dict[str, float]:
    ms = (time.perf_counter() - t0) * 1000.0
    return {"decode": ms, "total": ms}


def _source_name(source: SourceLike, index: int) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return f"<bytes #{index}>" if isinstance(source, (bytes, bytearray, memoryview)) else f"<array #{index}>"


#: The processors ``--processor`` may name. Checked when the arguments are parsed.
PROCESSORS: dict[str, ProcessorFactory] = {
    "engine": build_engine,
    "decode-only": DecodeOnlyProcessor,
}

#: The ``--processor`` used when none is given.
DEFAULT_PROCESSOR = "engine"


@contextlib.contextmanager
def open_processor(factory: ProcessorFactory, config: DocpipeConfig) -> Iterator[Processor]:
    """Build a processor and, if it is a context manager (the Engine is), enter and exit it."""
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


def field_keys() -> tuple[str, ...]:
    """The schema's field keys (the field registry's order)."""
    from stages.extraction.fields import FIELD_KEYS

    return FIELD_KEYS


def error_record(source: str, stage: str, type: str, message: str) -> dict:  # noqa: A002
    """A schema-v1 record for a document that failed outside the engine (e.g. the engine itself raised)."""
    return {
        "schema_version": "1",
        "source": source,
        "pages": [],
        "fields": {key: None for key in field_keys()},
        "needs_review": True,
        "review_reasons": [f"error:{stage}"],
        "errors": [{"stage": stage, "type": type, "message": message}],
        "timings_ms": {},
    }
