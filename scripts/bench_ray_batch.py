"""Throughput of ``docpipe batch`` against ``docpipe batch --ray`` on the same inputs, in interleaved rounds.

Each round runs, back to back and each into a fresh output directory: local batch; ``--ray`` starting its
own local Ray; and ``--ray --ray-address ADDR`` joining a local Ray started once before the rounds (as on a
cluster that already runs). For each run it reports the wall time of the whole command (start-up
included), pages/s over that wall time, and pages/s while records were being written (first record to
last, from the records' modification times: the rate once the workers or actors are up).

    PYTHONPATH=$PWD python scripts/bench_ray_batch.py IN --rounds 3 [--work /tmp/bench_ray]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(cmd: list[str], env: dict) -> float:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return wall


def measure(out: Path, wall: float) -> dict:
    files = sorted(out.rglob("*.json"), key=lambda p: p.stat().st_mtime)
    pages = sum(len(json.loads(p.read_text(encoding="utf-8"))["pages"]) for p in files)
    first, last = files[0].stat().st_mtime, files[-1].stat().st_mtime
    steady = (len(files) - 1) / (last - first) * pages / len(files) if last > first else float("nan")
    return {"docs": len(files), "pages": pages, "wall_s": round(wall, 2), "pages_per_s": round(pages / wall, 3),
            "steady_pages_per_s": round(steady, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_ray"))
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    # the running cluster without token auth: every local Ray started meanwhile writes a new token to
    # ~/.ray/auth_token, and the joining driver would read that one (this cluster listens on this machine only)
    join_env = dict(env, RAY_AUTH_MODE="disabled")
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    # the running cluster: a process that holds a local Ray (start_local_ray) until its stdin closes
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, ray; from pipeline.ops.ray_batch import start_local_ray; "
         "start_local_ray(); print(ray.get_runtime_context().gcs_address, flush=True); sys.stdin.read(); "
         "ray.shutdown()"],
        env=join_env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    address = holder.stdout.readline().strip()
    if not address:
        return 1
    cli = [sys.executable, "-m", "pipeline.cli", "batch", str(args.input)]
    variants = {
        "local": [],
        "ray (starts Ray)": ["--ray"],
        "ray (joins running Ray)": ["--ray", "--ray-address", address],
    }
    results: list[dict] = []
    try:
        for r in range(1, args.rounds + 1):
            for name, extra in variants.items():
                out = args.work / f"r{r}-{len(results)}"
                run_env = join_env if "--ray-address" in extra else env
                row = {"round": r, "run": name, **measure(out, run([*cli, "--out", str(out), *extra], run_env))}
                results.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
    finally:
        holder.stdin.close()
        holder.wait(60)
    print("\nmedians over rounds, and ratio to local:")
    base = {k: statistics.median(x[k] for x in results if x["run"] == "local") for k in ("pages_per_s", "steady_pages_per_s")}
    for name in variants:
        rows = [x for x in results if x["run"] == name]
        med = {k: statistics.median(x[k] for x in rows) for k in ("wall_s", "pages_per_s", "steady_pages_per_s")}
        print(f"  {name:25s} wall {med['wall_s']:.1f} s  {med['pages_per_s']:.3f} pages/s "
              f"({med['pages_per_s'] / base['pages_per_s']:.2f}x)  steady {med['steady_pages_per_s']:.3f} pages/s "
              f"({med['steady_pages_per_s'] / base['steady_pages_per_s']:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
