"""What runs inside a Ray worker for ``docpipe batch --ray``: a callable class for ``Dataset.map_batches``
that builds docpipe's in-process document processor once per actor and turns a batch of input paths into
schema-v1 results (no Ray import here: Ray only instantiates and calls it).

Each row carries ``idx`` (the input's place in the driver's plan) and ``path`` (the file's path as bytes,
so names that are not valid UTF-8 survive Arrow). The actor reads and hashes the file itself (the driver
never touches the bytes), runs :meth:`DocumentProcessor.process_batch` on the paths (the same call, names
and error records as the local engine's workers), and returns per row the SHA-256 of the input and the
result as compact JSON bytes (nested records do not fit one Arrow schema across batches).
"""
from __future__ import annotations

import logging
import os
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.contracts.result import error_result
from stages.contracts.types import StageError
from pipeline.ops.fsutil import json_bytes, sha256_file

log = logging.getLogger(__name__)

BatchFn = Callable[[Sequence[str], Sequence[str]], list[dict]]


#: A ``--backend`` name, or (from Python) a factory ``config -> batch function`` built once per actor.
BackendSpec = Union[str, Callable[[DocpipeConfig], BatchFn]]


def _build(config: DocpipeConfig, backend: BackendSpec) -> BatchFn:
    """The batch function for ``--backend NAME`` (the same choices as local batch) or a factory."""
    if callable(backend):
        return backend(config)
    if backend == "engine":
        from pipeline.core.processor import DocumentProcessor

        return DocumentProcessor(config).process_batch
    if backend == "decode-only":
        from pipeline.ops.backends import DecodeOnlyBackend

        dec = DecodeOnlyBackend(config)
        return lambda sources, names: [dec.decode(s, i) for i, s in enumerate(sources)]
    raise ValueError(f"unknown backend {backend!r}")


def _digest(path: str) -> Optional[str]:
    try:
        return sha256_file(path)
    except OSError:
        return None  # unreadable: the backend's record says why; it is retried next run


class DocpipeActor:
    """``map_batches(DocpipeActor, fn_constructor_kwargs={"config": ..., "backend": ...}, ...)``."""

    def __init__(self, config: DocpipeConfig, backend: BackendSpec = "engine") -> None:
        self.pid = os.getpid()
        self.run = _build(config, backend)
        log.info("docpipe actor ready (pid %d, %d predictor thread(s))", self.pid, config.predictor.cpu_threads)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        paths = [os.fsdecode(bytes(p)) for p in batch["path"]]
        digests = [_digest(p) for p in paths]
        try:
            results = self.run(paths, paths)
        except Exception as exc:  # process_batch collects per item; this is a last resort, as in the engine
            log.exception("backend raised on a batch of %d", len(paths))
            err = StageError("engine", type(exc).__name__, str(exc))
            results = [error_result(p, err, {}) for p in paths]
        return {
            "idx": np.asarray(batch["idx"], dtype=np.int64),
            "sha256": np.asarray([d or "" for d in digests], dtype=object),
            "result": np.asarray([json_bytes(r, indent=None) for r in results], dtype=object),
            "pid": np.full(len(paths), self.pid, dtype=np.int64),
        }
