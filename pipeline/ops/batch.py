"""``docpipe batch IN --out OUT``: every input under IN (recursively) -> one result record.

Inputs are files with a supported extension (``.jpg .jpeg .png .bmp .webp .tif .tiff .pdf`` …, any case)
plus files whose content is a supported format whatever their name; other files are counted as ignored.
Hidden files and directories (``.name``) are skipped. Output is ``OUT/<relative path>.json`` per input
(mirroring IN), or one line per input in ``OUT`` when it ends with ``.jsonl``. Each record is the
engine's schema-v1 result with ``source`` set to the path relative to IN and ``input_sha256`` added;
a re-run skips every input whose record exists with the same ``input_sha256``.

SIGTERM stops handing new inputs to the backend; those already handed over are finished and recorded,
the summary is printed and the exit status is 1 if inputs were left (a second SIGTERM ends the process at
once). SIGINT (Ctrl-C) stops at once. Either way what was written stays valid: re-run to resume.

Exit status: 0 every input ok or needs_review, 1 any failed (including failures recorded by an earlier
run and skipped now) or inputs left unprocessed (``--fail-fast``, SIGTERM, engine failure), 2 usage error,
130 interrupted by SIGINT.
"""
from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable, Iterator, Optional, TextIO

from pipeline.ops.backends import BACKENDS, BackendFactory, build_engine, open_backend
from pipeline.ops.batch_job import (
    BatchInterrupted,
    BatchSummary,
    InputFile,
    batch_record,
    plan_summary,
    start_job,
)
from pipeline.ops.cli_common import GracefulStop, add_engine_arguments, engine_config
from pipeline.ops.fsutil import sha256_file
from stages.contracts.config import DocpipeConfig

log = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def run_batch(
    in_dir: Path,
    out: Path,
    config: DocpipeConfig,
    backend: BackendFactory = build_engine,
    fail_fast: bool = False,
    retry_failed: bool = False,
    stream: Optional[TextIO] = None,
    tty: Optional[bool] = None,
    stop: Optional[threading.Event] = None,
    on_started: Optional[Callable[[], None]] = None,
) -> BatchSummary:
    """Process ``in_dir`` into ``out`` (a directory, or a ``.jsonl`` file); see the module docstring.

    Once ``stop`` is set (it may be set from a signal handler) no more inputs are handed to the backend;
    those already handed over are finished and recorded. ``on_started`` runs once the backend is built
    (the CLI re-installs its SIGTERM handler there: importing Paddle replaces it with one that aborts)."""
    t0 = time.monotonic()
    stream = stream or sys.stderr
    stop = stop or threading.Event()
    plan, progress, recorder = start_job(in_dir, out, config, retry_failed, stream, tty)
    todo, sink, processed = plan.todo, plan.sink, recorder.processed
    pending: deque[tuple[InputFile, Optional[str]]] = deque()

    def feed() -> Iterator[str]:
        for n, (item, digest) in enumerate(todo):
            if stop.is_set():
                in_flight = f", finishing the {len(pending)} in flight" if pending else ""
                progress.note(f"docpipe batch: stopping on request; {len(todo) - n} input(s) left{in_flight}")
                return
            if digest is None:
                try:
                    digest = sha256_file(item.path)
                except OSError:
                    digest = None  # unreadable: the engine reports why; it will be retried next run
            pending.append((item, digest))
            yield os.fspath(item.path)

    def summary() -> BatchSummary:
        return plan_summary(plan, processed, time.monotonic() - t0, stop.is_set())

    sink.prepare(plan.stale)
    if not todo or stop.is_set():  # everything is up to date (or stopping): do not start the engine at all
        sink.close()
        progress.close()
        return summary()
    try:
        with open_backend(backend, config) as proc:
            if on_started is not None:
                on_started()
            results = proc.extract_many(feed(), ordered=True)
            try:
                for result in results:
                    item, digest = pending.popleft()
                    outcome = recorder.write(item, batch_record(result, item, digest))
                    if outcome == "failed" and fail_fast:
                        progress.note("stopping at the first failure (--fail-fast)")
                        break
            except (KeyboardInterrupt, OSError):
                raise  # OSError: the output cannot be written; nothing sensible to continue with
            except Exception as exc:  # the backend itself broke (a bad input never raises)
                log.debug("backend failed", exc_info=True)
                progress.note(f"docpipe batch: processing stopped: {type(exc).__name__}: {exc}")
            finally:
                close = getattr(results, "close", None)
                if callable(close):
                    close()
    except KeyboardInterrupt:
        raise BatchInterrupted(summary()) from None
    finally:
        progress.close()
        sink.close()
    return summary()


# ---------------------------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN", type=Path, help="directory to process recursively")
    parser.add_argument(
        "--out", required=True, type=Path, metavar="OUT",
        help="output directory (one OUT/<relative path>.json per input), or a file ending in .jsonl",
    )
    add_engine_arguments(parser, "input")
    parser.add_argument("--fail-fast", action="store_true", help="stop at the first failed input (exit 1)")
    parser.add_argument(
        "--retry-failed", action="store_true", help="re-process inputs whose earlier record is a failure"
    )
    parser.add_argument(
        "--ray", action="store_true",
        help="run on Ray Data (pip install 'docpipe[ray]'): a local Ray sized to the usable CPUs, or the cluster "
        "at --ray-address; --workers then sets the number of actors (docs/scale_out.md)",
    )
    parser.add_argument("--ray-address", metavar="ADDR", default=None, help="join this Ray cluster (with --ray)")


def run(args: argparse.Namespace) -> int:
    in_dir: Path = args.input
    out: Path = args.out
    if not in_dir.is_dir():
        sys.stderr.write(f"docpipe batch: {in_dir}: not a directory\n")
        return EXIT_USAGE
    jsonl = out.suffix.lower() == ".jsonl"
    if os.path.abspath(out) == os.path.abspath(in_dir):
        sys.stderr.write("docpipe batch: --out must not be IN itself\n")
        return EXIT_USAGE
    if jsonl and out.is_dir():
        sys.stderr.write(f"docpipe batch: --out {out}: is a directory, not a .jsonl file\n")
        return EXIT_USAGE
    if not jsonl and out.exists() and not out.is_dir():
        sys.stderr.write(f"docpipe batch: --out {out}: exists and is not a directory (use a .jsonl name for one file)\n")
        return EXIT_USAGE
    config = engine_config("batch", args)
    if config is None:
        return EXIT_USAGE
    if args.ray_address is not None and not args.ray:
        sys.stderr.write("docpipe batch: --ray-address needs --ray\n")
        return EXIT_USAGE
    if args.ray and importlib.util.find_spec("ray") is None:
        sys.stderr.write("docpipe batch: --ray needs Ray: pip install 'docpipe[ray]'\n")
        return EXIT_USAGE
    stop = threading.Event()
    # SIGTERM: stop.set() only -- writing to stderr in a handler could re-enter a write in progress
    with GracefulStop(stop.set, (signal.SIGTERM,)) as graceful:
        try:
            if args.ray:
                from pipeline.ops.ray_batch import run_ray_batch  # imports Ray only when asked for

                summary = run_ray_batch(
                    in_dir, out, config, args.backend, address=args.ray_address, actors=args.workers,
                    fail_fast=args.fail_fast, retry_failed=args.retry_failed, stop=stop,
                    on_started=graceful.install,
                )
            else:
                summary = run_batch(
                    in_dir, out, config, BACKENDS[args.backend], fail_fast=args.fail_fast,
                    retry_failed=args.retry_failed, stop=stop, on_started=graceful.install,
                )
        except BatchInterrupted as exc:
            sys.stderr.write(exc.summary.line() + " (interrupted; run again to resume)\n")
            return EXIT_INTERRUPTED
        except Exception as exc:  # engine start-up failure, output not writable, ...
            log.debug("batch failed", exc_info=True)
            sys.stderr.write(f"docpipe batch: {type(exc).__name__}: {exc}\n")
            return EXIT_FAILED
    note = " (stopped by SIGTERM; run again to resume)" if summary.stopped else ""
    sys.stderr.write(summary.line() + note + "\n")
    return EXIT_FAILED if summary.failed or summary.unprocessed else EXIT_OK
