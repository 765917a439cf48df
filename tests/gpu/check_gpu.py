"""GPU check, one script: ``python tests/gpu/check_gpu.py [--pages N]`` on a host with a CUDA device.

1. Stream/event scheduling and CuPy pre/post-processing (runs without Paddle): three stages, each on its
   own CUDA stream — det pre-processing (resize + normalize, on device), a det-sized device workload,
   DB thresholding (on device) — chained by events (the next stage's stream waits on the previous
   stage's event; the host never synchronizes between stages). The device workload stands in for the
   Paddle predictor where Paddle-GPU is not installed, and is labelled so in the output.
2. If Paddle is a CUDA build, the real engine runs N pages on the GPU and prints pages/s.

Prints pages/s, per-stage busy time (from CUDA events) and whether stage work overlapped."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipeline.core.gpu import StageStream, cuda_ready, db_bitmap_gpu, det_preprocess_gpu, paddle_cuda_ready  # noqa: E402


def _pages(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 255, (1754, 1240, 3), dtype=np.uint8) for _ in range(n)]


def stream_pipeline(n_pages: int) -> dict:
    import cupy

    pre, model, post = (StageStream.create(s) for s in ("pre", "model", "post"))
    weights = cupy.random.standard_normal((2048, 2048), dtype=cupy.float32)
    pages = _pages(n_pages)
    spans: dict[str, list[tuple]] = {"pre": [], "model": [], "post": []}
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    outputs = []
    for img in pages:
        s0 = pre.ready_event()
        x = det_preprocess_gpu(img, 960, 672, pre)
        e_pre = pre.ready_event()
        spans["pre"].append((s0, e_pre))
        model.wait(e_pre)
        s1 = model.ready_event()
        with model.stream:
            y = x.reshape(3, -1)[:, : 2048 * 64].reshape(-1, 2048)
            for _ in range(8):  # stand-in for the det network: ~ the FLOPs of PP-OCRv4 det at 960x672
                y = cupy.tanh(y @ weights)
            prob = cupy.asarray(1 / (1 + cupy.exp(-y.mean(axis=1))))
        e_model = model.ready_event()
        spans["model"].append((s1, e_model))
        post.wait(e_model)
        s2 = post.ready_event()
        with post.stream:
            outputs.append((prob > 0.3).astype(cupy.uint8))
        spans["post"].append((s2, post.ready_event()))
    # one host-side DB threshold readback, the path the CPU contour tracer uses
    db_bitmap_gpu(cupy.random.random((960, 672), dtype=cupy.float32), 0.3, post)
    cupy.cuda.Device().synchronize()
    wall = (time.perf_counter() - t0) * 1000
    busy = {k: sum(cupy.cuda.get_elapsed_time(a, b) for a, b in v) for k, v in spans.items()}
    # overlap: did any stage's interval for page i+1 start before another stage's interval for page i ended?
    ref = spans["pre"][0][0]
    iv = {k: [(cupy.cuda.get_elapsed_time(ref, a), cupy.cuda.get_elapsed_time(ref, b)) for a, b in v] for k, v in spans.items()}
    overlapped = any(
        iv["pre"][i + 1][0] < iv["model"][i][1] or iv["model"][i + 1][0] < iv["post"][i][1]
        for i in range(n_pages - 1)
    )
    return {
        "what": "CuPy streams/events pipeline; model stage is a stand-in device workload (no Paddle-GPU)",
        "pages": n_pages, "wall_ms": round(wall, 1), "pages_per_s": round(n_pages / wall * 1000, 2),
        "stage_busy_ms": {k: round(v, 1) for k, v in busy.items()},
        "sum_of_stage_busy_ms": round(sum(busy.values()), 1), "stages_overlapped": bool(overlapped),
    }


def paddle_engine(n_pages: int) -> dict:
    from stages.contracts.config import DocpipeConfig, with_overrides
    from pipeline.core.engine import Engine

    cfg = DocpipeConfig()
    cfg = with_overrides(cfg, predictor={"device": "gpu"})
    pages = _pages(n_pages)
    with Engine(cfg) as eng:
        list(eng.extract_many(pages[:2]))
        t0 = time.perf_counter()
        list(eng.extract_many(pages))
        dt = time.perf_counter() - t0
        return {"pages": n_pages, "pages_per_s": round(n_pages / dt, 2), "stats": eng.stats()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=40)
    args = ap.parse_args(argv)
    if not cuda_ready():
        print(json.dumps({"skipped": "no CUDA device visible to CuPy"}))
        return 0
    report = {"stream_pipeline": stream_pipeline(args.pages)}
    report["paddle_engine"] = paddle_engine(args.pages) if paddle_cuda_ready() else "skipped: Paddle is not a CUDA build here"
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
