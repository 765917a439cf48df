"""What ``batch`` and ``watch`` need from an engine, and helpers for the records it yields.

A *processor* is anything with ``extract_many(sources, ordered=True) -> Iterator[dict]`` that yields one
schema-v1 result per source, in order, and never raises for a bad input. :class:`pipeline.engine.Engine`
is the real one; tests plug in light ones with the hidden ``--processor MODULE:FACTORY`` option.
"""
from __future__ import annotations

import contextlib
import importlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, Protocol, Union

import numpy as np

from pipeline.config import DocpipeConfig

SourceLike = Union[str, Path, bytes, np.ndarray]
Outcome = Literal["ok", "needs_review", "failed"]

#: The factory used when ``--processor`` is not given.
DEFAULT_PROCESSOR = "pipeline.engine:Engine"

#: Field keys of the output schema (DESIGN.md §5), used when the engine's own list cannot be imported.
FIELD_KEYS: tuple[str, ...] = (
    "policy_number",
    "insurer",
    "product_name",
    "policyholder_name",
    "policyholder_id_number",
    "policyholder_phone",
    "policyholder_address",
    "insured_name",
    "insured_id_number",
    "beneficiary_name",
    "sum_insured",
    "premium",
    "effective_date",
    "expiry_date",
    "issue_date",
)


class Processor(Protocol):
    def extract_many(self, sources: Iterable[SourceLike], ordered: bool = True) -> Iterator[dict]: ...


ProcessorFactory = Callable[[DocpipeConfig], Any]


class ProcessorLoadError(RuntimeError):
    """``--processor`` names something that cannot be imported."""


def load_factory(spec: "str | ProcessorFactory" = DEFAULT_PROCESSOR) -> ProcessorFactory:
    """Import ``"package.module:attribute"`` (a class or function taking a :class:`DocpipeConfig`).

    A callable is returned unchanged (for callers that hold a factory already)."""
    if callable(spec):
        return spec
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ProcessorLoadError(f"--processor must look like package.module:Factory, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ProcessorLoadError(f"cannot import {module_name!r} for the processor: {exc}") from exc
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError as exc:
        raise ProcessorLoadError(f"{module_name!r} has no attribute {attr!r}") from exc
    if not callable(obj):
        raise ProcessorLoadError(f"{spec!r} is not callable")
    return obj


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
    """The schema's field keys: the engine's list when importable, else DESIGN.md §5's."""
    try:
        from pipeline.processor import FIELD_KEYS  # the engine's own list

        return tuple(FIELD_KEYS)
    except Exception:  # pragma: no cover - only while the engine module is unavailable
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
