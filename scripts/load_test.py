"""Load test of ``docpipe serve`` on loopback: a bounded number of clients for a bounded time, then the same
pages through ``docpipe batch`` for comparison. Prints one JSON report (docs/service.md has the numbers).

    PYTHONPATH=$PWD python scripts/load_test.py --clients 4 --duration 60 [--config FILE] [--batch]

It starts its own server (``python -m pipeline.cli serve``) on a free 127.0.0.1 port with a fresh job store,
waits for /readyz, runs the clients against POST /v1/extract (a 429 is counted and honoured: the client
sleeps Retry-After), then submits --jobs jobs and checks every one finishes with all its results.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    xs = sorted(values)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def start_server(config: Path | None, data_dir: Path, port: int, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "pipeline.cli", "serve", "--port", str(port), "--data-dir", str(data_dir)]
    if config:
        cmd += ["--config", str(config)]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def wait_ready(url: str, proc: subprocess.Popen, timeout_s: float = 600) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                return time.monotonic() - t0
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise SystemExit("server not ready in time")


def run_clients(url: str, pages: list[Path], clients: int, duration_s: float) -> dict:
    lat: list[float] = []
    counts = {"ok": 0, "429": 0, "other": 0}
    lock = threading.Lock()
    deadline = time.monotonic() + duration_s
    blobs = [(p.name, p.read_bytes()) for p in pages]

    def client(k: int) -> None:
        i = k
        with httpx.Client(base_url=url, timeout=600) as c:
            while time.monotonic() < deadline:
                name, data = blobs[i % len(blobs)]
                i += clients
                t0 = time.perf_counter()
                r = c.post("/v1/extract", files={"file": (name, data)})
                dt = time.perf_counter() - t0
                with lock:
                    if r.status_code == 200:
                        counts["ok"] += 1
                        lat.append(dt)
                    elif r.status_code == 429:
                        counts["429"] += 1
                    else:
                        counts["other"] += 1
                if r.status_code == 429:
                    time.sleep(float(r.headers.get("retry-after", "1")))

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    total = sum(counts.values())
    return {
        "clients": clients, "elapsed_s": round(elapsed, 1), "requests": total, **{f"status_{k}": v for k, v in counts.items()},
        "requests_per_s": round(total / elapsed, 3), "pages_per_s": round(counts["ok"] / elapsed, 3),
        "latency_p50_s": round(percentile(lat, 0.5), 3), "latency_p99_s": round(percentile(lat, 0.99), 3),
        "latency_mean_s": round(statistics.mean(lat), 3) if lat else None,
    }


def run_jobs(url: str, pages: list[Path], jobs: int, per_job: int) -> dict:
    ids = []
    t0 = time.monotonic()
    with httpx.Client(base_url=url, timeout=600) as c:
        for j in range(jobs):
            files = [("file", (p.name, p.read_bytes())) for p in (pages[(j * per_job + i) % len(pages)] for i in range(per_job))]
            r = c.post("/v1/jobs", files=files)
            assert r.status_code == 202, r.text
            ids.append(r.json()["id"])
        status = {}
        while True:
            status = {i: c.get(f"/v1/jobs/{i}").json()["status"] for i in ids}
            if all(s not in ("queued", "running") for s in status.values()):
                break
            time.sleep(0.5)
        complete = sum(
            len([r for r in c.get(f"/v1/jobs/{i}/results").json()["results"] if r is not None]) == per_job for i in ids)
    elapsed = time.monotonic() - t0
    return {"jobs": jobs, "documents_per_job": per_job, "elapsed_s": round(elapsed, 1),
            "succeeded": sum(s == "succeeded" for s in status.values()), "complete_results": complete,
            "lost": jobs - len(status), "pages_per_s": round(jobs * per_job / elapsed, 3)}


def run_batch(pages: list[Path], copies: int, config: Path | None, work: Path) -> dict:
    src = work / f"batch_in_{copies}"
    src.mkdir()
    for k in range(copies):
        for p in pages:
            shutil.copy(p, src / f"{k}_{p.name}")
    cmd = [sys.executable, "-m", "pipeline.cli", "batch", str(src), "--out", str(work / f"batch_out_{copies}.jsonl")]
    if config:
        cmd += ["--config", str(config)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)
    wall = time.monotonic() - t0
    line = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return {"pages": copies * len(pages), "wall_s": round(wall, 1), "summary": line, "rc": proc.returncode}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=Path, default=REPO / "samples" / "pages")
    ap.add_argument("--clients", type=int, nargs="+", default=[4])
    ap.add_argument("--duration", type=float, default=60.0, help="seconds per client run")
    ap.add_argument("--jobs", type=int, default=5)
    ap.add_argument("--per-job", type=int, default=2)
    ap.add_argument("--config", type=Path)
    ap.add_argument("--batch", action="store_true", help="also time docpipe batch on the same pages")
    args = ap.parse_args()
    pages = sorted(p for p in args.pages.iterdir() if p.suffix.lower() in (".jpg", ".png"))
    report: dict = {"pages_in_set": len(pages)}
    with tempfile.TemporaryDirectory(prefix="docpipe-load-") as tmp:
        work = Path(tmp)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(args.config, work / "store", port, work / "server.log")
        try:
            report["server_ready_s"] = round(wait_ready(url, proc), 1)
            report["extract"] = [run_clients(url, pages, n, args.duration) for n in args.clients]
            report["jobs"] = run_jobs(url, pages, args.jobs, args.per_job)
            metrics = httpx.get(url + "/metrics").text
            report["metrics_documents"] = {m.group(1): float(m.group(2)) for m in re.finditer(
                r'^docpipe_documents_total\{outcome="(\w+)"\} (\S+)$', metrics, re.M)}
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                report["server_exit_code"] = proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                report["server_exit_code"] = "killed"
            report["server_graceful_shutdown"] = '"event": "service stopped"' in (work / "server.log").read_text()
        if args.batch:
            small, large = run_batch(pages, 1, args.config, work), run_batch(pages, 3, args.config, work)
            steady = (large["pages"] - small["pages"]) / (large["wall_s"] - small["wall_s"])
            report["batch"] = {"runs": [small, large], "steady_pages_per_s": round(steady, 3),
                               "note": "steady rate = extra pages / extra wall time of the larger run (start-up cancels)"}
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
