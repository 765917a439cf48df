"""docpipe: scanned Chinese insurance policies -> validated JSON.

``from pipeline import extract, Engine``; heavy modules load on first use."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["extract", "Engine", "DocpipeConfig", "load_config"]

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.core.api import extract
    from stages.contracts.config import DocpipeConfig, load_config
    from pipeline.core.engine import Engine


def __getattr__(name: str) -> Any:
    if name == "extract":
        from pipeline.core.api import extract

        return extract
    if name == "Engine":
        from pipeline.core.engine import Engine

        return Engine
    if name == "DocpipeConfig":
        from stages.contracts.config import DocpipeConfig

        return DocpipeConfig
    if name == "load_config":
        from stages.contracts.config import load_config

        return load_config
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
