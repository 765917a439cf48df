"""Engine behaviour with real predictors on small pages."""
from __future__ import annotations

import os
import queue
import signal
import time

import cv2
import psutil
import pytest

from stages.contracts.config import DocpipeConfig, with_overrides
from pipeline.core.engine import Engine, _collect_batch, _Task
from tests.conftest import text_image

pytestmark = pytest.mark.slow


def _config(**engine) -> DocpipeConfig:
    cfg = DocpipeConfig()
    return with_overrides(cfg, predictor={"cpu_threads": 1}, engine=engine)


def _png(lines: list[str]) -> bytes:
    ok, buf = cv2.imencode(".png", text_image(lines, width=420))
    assert ok
    return buf.tobytes()


@pytest.fixture(scope="module")
def pages() -> list[bytes]:
    return [_png([f"保单号 P{1000 + i}"]) for i in range(6)]


@pytest.fixture(scope="module")
def proc_engine():
    with Engine(_config(mode="processes", workers=2, max_batch=4, max_wait_ms=50, queue_size=4)) as eng:
        yield eng


def test_results_complete_and_in_order(proc_engine):
    sources, expect = [], []
    for i in range(12):
        if i % 5 == 3:
            sources.append(b"not an image")
            expect.append(None)
        else:
            sources.append(_png([f"保单号 P{2000 + i}"]))
            expect.append(f"P{2000 + i}")
    results = list(proc_engine.extract_many(sources, ordered=True))
    assert len(results) == len(sources)
    for want, res in zip(expect, results):
        assert res["schema_version"] == "1"
        if want is None:
            assert res["errors"] and res["errors"][0]["stage"] == "decode"
        else:
            assert not res["errors"]
            assert want in "".join(ln["text"] for ln in res["pages"][0]["lines"])
    idx = [int(r["source"].rstrip(">").split("#")[1]) for r in results]
    assert idx == sorted(idx)


def test_unordered_returns_everything(proc_engine, pages):
    results = list(proc_engine.extract_many(pages * 2, ordered=False))
    assert len(results) == 12 and all(not r["errors"] for r in results)


def test_dynamic_batching_forms_batches_under_load(proc_engine, pages):
    before = dict(proc_engine.stats()["batch_size_histogram"])
    futs = [proc_engine.submit(p) for p in pages * 2]
    for f in futs:
        f.result(timeout=120)
    after = proc_engine.stats()["batch_size_histogram"]
    grown = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    assert any(size > 1 and n > 0 for size, n in grown.items()), after


def test_lone_item_is_flushed_after_max_wait():
    q: queue.Queue = queue.Queue()
    first = _Task(0, b"", "a")
    t0 = time.monotonic()
    batch, stop = _collect_batch(q, first, max_batch=8, max_wait_s=0.05)
    assert batch == [first] and not stop and time.monotonic() - t0 >= 0.05
    q.put(_Task(1, b"", "b"))
    q.put(None)
    batch, stop = _collect_batch(q, first, max_batch=8, max_wait_s=5)
    assert [t.idx for t in batch] == [0, 1] and stop


def test_slow_consumer_keeps_memory_bounded(proc_engine, pages):
    pulled: list[int] = []
    seen = []

    def sources():
        for i in range(40):
            pulled.append(i)
            yield pages[i % len(pages)]

    limit = proc_engine.max_in_flight
    for n, _res in enumerate(proc_engine.extract_many(sources()), 1):
        time.sleep(0.02)
        in_flight = len(pulled) - n
        seen.append(in_flight)
        depth = proc_engine.stats()["queue_depth"]
        assert depth is None or depth <= proc_engine.config.engine.queue_size
    assert max(seen) <= limit
    assert 0 < proc_engine.stats()["max_queue_depth"] <= proc_engine.config.engine.queue_size


def test_worker_crash_loses_nothing_and_engine_recovers(pages):
    with Engine(_config(mode="processes", workers=1, max_batch=2, max_wait_ms=0, queue_size=4)) as eng:
        worker = next(iter(eng._workers.values()))
        futs = [eng.submit(p) for p in pages]
        time.sleep(0.3)
        os.kill(worker.pid, signal.SIGKILL)
        results = [f.result(timeout=120) for f in futs]
        # every document comes back; the ones the dead worker held were retried alone and succeeded
        assert all(not r["errors"] for r in results), [r["errors"] for r in results]
        assert next(iter(eng._workers.values())).pid != worker.pid
        assert not eng.extract(pages[0])["errors"]


def test_shutdown_mid_stream_leaves_no_worker_processes(pages):
    me = psutil.Process()
    eng = Engine(_config(mode="processes", workers=2, max_batch=2, max_wait_ms=5, queue_size=2))
    pids = [w.pid for w in eng._workers.values()]
    stream = eng.extract_many(pages * 10)
    next(stream)
    eng.close()
    time.sleep(0.2)
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not [c for c in me.children(recursive=True) if c.pid in pids and c.is_running()
                and c.status() != psutil.STATUS_ZOMBIE]


def test_a_raising_stage_fails_only_that_document(monkeypatch, pages):
    from stages.recognition.recognizer import TextRecognizer

    real = TextRecognizer.recognize_batch

    def flaky(self, crops, groups=None):
        if any(c.shape[1] > 3 * 48 and c.mean() < 200 and c.shape[0] > 60 for c in crops):
            raise RuntimeError("boom on a tall crop")
        return real(self, crops, groups)

    monkeypatch.setattr(TextRecognizer, "recognize_batch", flaky)
    tall = _png_big("保单号 P9999")
    with Engine(_config(mode="threads", workers=1, max_batch=8, max_wait_ms=200, queue_size=8)) as eng:
        futs = [eng.submit(p) for p in [pages[0], tall, pages[1]]]
        res = [f.result(timeout=120) for f in futs]
    assert not res[0]["errors"] and not res[2]["errors"]
    assert res[1]["errors"][0] == {"stage": "recognize", "type": "RuntimeError", "message": "boom on a tall crop"}


def _png_big(text: str) -> bytes:
    ok, buf = cv2.imencode(".png", text_image([text], width=900, line_h=140, size=90))
    assert ok
    return buf.tobytes()


def _log_in_a_spawned_worker(setup) -> None:
    import logging

    from pipeline.core.engine import _apply_log_setup

    _apply_log_setup(setup)
    logging.getLogger("pipeline.core.engine").warning("worker says hello")


def test_spawned_workers_log_through_the_parents_formatter(capfd):
    """A worker process starts with no logging set up; the engine hands it the parent's formatter (under
    ``docpipe serve``: the JSON one), so its lines come out as the parent's do."""
    import json
    import logging
    import multiprocessing as mp

    from pipeline.core.engine import _log_setup
    from pipeline.service.logs import JsonFormatter

    root = logging.getLogger()
    saved = root.handlers[:]
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root.handlers[:] = [handler]
    try:
        setup = _log_setup()
    finally:
        root.handlers[:] = saved
    assert setup is not None and isinstance(setup[1], JsonFormatter)
    proc = mp.get_context("spawn").Process(target=_log_in_a_spawned_worker, args=(setup,))
    proc.start()
    proc.join(120)
    assert proc.exitcode == 0
    lines = [json.loads(x) for x in capfd.readouterr().err.splitlines() if x.startswith("{")]
    assert any(x["event"] == "worker says hello" and x["level"] == "WARNING" for x in lines)
