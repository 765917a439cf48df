"""What ``docpipe batch`` and ``docpipe watch`` share on the command line: the engine options, loading the
configuration they override, and graceful stop on signals (the first finishes in-flight work, a second ends
the process the default way)."""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Optional, Sequence

from pipeline.ops.backends import BACKENDS, DEFAULT_BACKEND
from stages.contracts.config import ConfigError, DocpipeConfig, load_config, with_overrides


def add_engine_arguments(parser: argparse.ArgumentParser, unit: str) -> None:
    """``--workers``, ``--config`` and ``--backend``; ``unit`` names what a decode-only record is for."""
    parser.add_argument("--workers", type=int, default=None, help="engine workers (overrides engine.workers)")
    parser.add_argument("--config", type=Path, default=None, help="YAML configuration file")
    parser.add_argument(
        "--backend", choices=list(BACKENDS), default=DEFAULT_BACKEND,
        help=f"engine: OCR and field extraction (default); decode-only: only check that each {unit} can be "
        "decoded (no models; each record has the page sizes, null fields and the review reason decode_only)",
    )


def load_config_or_say(path: Optional[str], prefix: str) -> Optional[DocpipeConfig]:
    """``load_config(path)``; None, after ``<prefix>: <why>`` on stderr, when the file is unusable."""
    try:
        return load_config(path)
    except ConfigError as exc:
        sys.stderr.write(f"{prefix}: {exc}\n")
        return None


def engine_config(prog: str, args: argparse.Namespace, **sections: dict[str, Any]) -> Optional[DocpipeConfig]:
    """The configuration of ``--config`` with ``--workers`` and ``sections`` applied; None (after saying why
    on stderr) when it is unusable."""
    if args.workers is not None and args.workers < 1:
        sys.stderr.write(f"docpipe {prog}: --workers must be at least 1\n")
        return None
    config = load_config_or_say(args.config, f"docpipe {prog}")
    if config is None:
        return None
    if args.workers is not None:
        sections = {**sections, "engine": {**sections.get("engine", {}), "workers": args.workers}}
    return with_overrides(config, **sections) if sections else config


class GracefulStop:
    """``with GracefulStop(on_stop, signals) as stop:`` -- the first of ``signals`` calls ``on_stop`` (only
    that: it runs inside a signal handler) and resets every one of them to its default, so a second signal
    ends the process at once. ``stop.install()`` re-installs the handlers (after a library replaced them)
    unless a signal already came. The previous handlers are restored on exit."""

    def __init__(self, on_stop: Callable[[], None], signals: Sequence[int] = (signal.SIGTERM,)):
        self.on_stop = on_stop
        self.signals = tuple(signals)
        self.stopping = False
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        self.stopping = True
        for sig in self.signals:
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        self.on_stop()

    def install(self) -> None:
        if not self.stopping:
            for sig in self.signals:
                signal.signal(sig, self._handle)

    def __enter__(self) -> "GracefulStop":
        self._previous = {sig: signal.getsignal(sig) for sig in self.signals}
        self.install()
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        for sig, handler in self._previous.items():
            if handler is not None:
                signal.signal(sig, handler)
