"""Benchmark runners. Each runs in its own subprocess (``python -m pipeline.tools.bench_engines NAME SPEC``) so
that peak memory is measured per engine, and prints one JSON line: pages/s, per-page OCR lines, peak RSS.

Peers use the same PP-OCRv4 det/rec weights (ONNX copies in rapidocr-onnxruntime)."""
from __future__ import annotations

import json
import logging
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSpec:
    pages: list[str]  # image paths, processed in this order
    warmup: int
    threads: int
    config: str | None  # docpipe YAML config
    soak_checkpoints: list[int]


class PeakRSS:
    """Samples the RSS of this process and its children (worker processes) every 20 ms."""

    def __init__(self) -> None:
        import psutil

        self._proc = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def sample(self) -> int:
        import psutil

        total = 0
        for p in [self._proc] + self._proc.children(recursive=True):
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        self.peak = max(self.peak, total)
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.sample()

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        self.sample()
        return self.peak


def _lines_of_result(result: dict) -> list[list[tuple[str, list]]]:
    return [[(ln["text"], ln["polygon"]) for ln in page["lines"]] for page in result["pages"]]


def _docpipe_config(spec: RunSpec, **engine: Any):
    from stages.contracts.config import load_config, with_overrides

    cfg = load_config(spec.config)
    cfg = with_overrides(cfg, predictor={"cpu_threads": spec.threads})
    if engine:
        cfg = with_overrides(cfg, engine=engine)
    return cfg


def _timed_loop(call: Callable[[str], list], spec: RunSpec, rss: PeakRSS) -> dict[str, Any]:
    for p in spec.pages[: spec.warmup]:
        call(p)
    out, checkpoints = [], {}
    t0 = time.perf_counter()
    for i, p in enumerate(spec.pages, 1):
        out.append(call(p))
        if i in spec.soak_checkpoints:
            checkpoints[str(i)] = round(rss.peak / 2**20, 1)
    dt = time.perf_counter() - t0
    return {"seconds": dt, "outputs": out, "rss_checkpoints_mb": checkpoints}


def run_docpipe_loop(spec: RunSpec, rss: PeakRSS) -> dict[str, Any]:
    """``Engine.extract()`` called once per page, one after another (the sequential baseline)."""
    from pipeline.core.engine import Engine

    with Engine(_docpipe_config(spec, mode="inline")) as eng:
        return _timed_loop(lambda p: _lines_of_result(eng.extract(p)), spec, rss)


def run_docpipe_engine(spec: RunSpec, rss: PeakRSS) -> dict[str, Any]:
    """``Engine.extract_many()`` over all pages with the engine's own worker plan."""
    from pipeline.core.engine import Engine

    with Engine(_docpipe_config(spec)) as eng:
        for r in eng.extract_many(spec.pages[: spec.warmup]):
            pass
        out, checkpoints = [], {}
        t0 = time.perf_counter()
        for i, r in enumerate(eng.extract_many(spec.pages), 1):
            out.append(_lines_of_result(r))
            if i in spec.soak_checkpoints:
                checkpoints[str(i)] = round(rss.peak / 2**20, 1)
        dt = time.perf_counter() - t0
        stats = eng.stats()
    return {"seconds": dt, "outputs": out, "rss_checkpoints_mb": checkpoints, "engine_stats": stats}


def _rapid_call(engine) -> Callable[[str], list]:
    def call(path: str) -> list:
        result, _ = engine(path, use_cls=False)
        return [[(text, np.asarray(box).tolist()) for box, text, _score in (result or [])]]

    return call


def run_rapidocr_onnxruntime(spec: RunSpec, rss: PeakRSS) -> dict[str, Any]:
    from rapidocr_onnxruntime import RapidOCR

    eng = RapidOCR(intra_op_num_threads=spec.threads)
    return _timed_loop(_rapid_call(eng), spec, rss)


def run_rapidocr_paddle(spec: RunSpec, rss: PeakRSS) -> dict[str, Any]:
    from rapidocr_paddle import RapidOCR

    eng = RapidOCR(cpu_math_library_num_threads=spec.threads)
    return _timed_loop(_rapid_call(eng), spec, rss)


RUNNERS: dict[str, Callable[[RunSpec, PeakRSS], dict[str, Any]]] = {
    "docpipe_loop": run_docpipe_loop,
    "docpipe_engine": run_docpipe_engine,
    "rapidocr_onnxruntime": run_rapidocr_onnxruntime,
    "rapidocr_paddle": run_rapidocr_paddle,
}


def main(argv: list[str]) -> int:
    name, spec_path = argv
    spec = RunSpec(**json.loads(Path(spec_path).read_text()))
    logging.basicConfig(level=logging.WARNING)
    rss = PeakRSS()
    res = RUNNERS[name](spec, rss)
    res["peak_rss_mb"] = round(rss.stop() / 2**20, 1)
    res["pages"] = len(spec.pages)
    sys.stdout.write("BENCH_RESULT " + json.dumps(res, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
