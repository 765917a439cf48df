"""``extract()`` single-page latency and peak RSS of two source trees, measured interleaved in one run.

Each measurement runs in a fresh process with ``PYTHONPATH`` set to the tree being measured, the trees alternating
(A B, then B A, ...), so both see the same machine load:

- latency: every page of ``--pages`` through ``extract()`` once to warm up (predictors built, input shapes seen),
  then ``--passes`` timed passes; the median of the timed calls.
- peak RSS: a loop of ``extract()`` over the first ``--rss-n`` images of ``--rss-dir`` (clean scans); the process's
  peak resident set (``ru_maxrss``).

    python scripts/bench_extract_call.py --tree before=/path/to/base --tree after=. \\
        --pages 'samples/pages/*.jpg' --rss-dir /work/data/dev5 --rss-n 20 --rounds 2 --json out.json
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".tif", ".tiff")


def _child(mode: str, files: list[str], passes: int) -> dict:
    """Runs inside the measured tree's process."""
    import pipeline
    from pipeline import extract

    out: dict = {"pipeline": os.path.dirname(pipeline.__file__)}
    if mode == "latency":
        for f in files:
            extract(f)  # warm-up
        times = []
        for _ in range(passes):
            for f in files:
                t0 = time.perf_counter()
                res = extract(f)
                times.append((time.perf_counter() - t0) * 1000.0)
                if res["errors"]:
                    raise SystemExit(f"extract() failed on {f}: {res['errors']}")
        out.update(calls=len(times), median_ms=round(statistics.median(times), 1))
    else:
        for f in files:
            if extract(f)["errors"]:
                raise SystemExit(f"extract() failed on {f}")
        out.update(documents=len(files), peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1))
    return out


def _measure(tree: Path, mode: str, files: list[str], passes: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--passes", str(passes), "--files", *files]
    done = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree} {mode}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tree", action="append", default=[], metavar="NAME=DIR", help="a source tree to measure (2+)")
    p.add_argument("--pages", default="samples/pages/*.jpg", help="glob of the latency pages")
    p.add_argument("--passes", type=int, default=1, help="timed passes over the latency pages")
    p.add_argument("--rss-dir", type=Path, help="folder of clean scans for the peak-RSS loop")
    p.add_argument("--rss-n", type=int, default=20)
    p.add_argument("--rounds", type=int, default=2, help="each tree measured this many times, order alternating")
    p.add_argument("--json", type=Path, help="write every measurement here")
    p.add_argument("--child", choices=("latency", "rss"), help=argparse.SUPPRESS)
    p.add_argument("--files", nargs="*", default=[], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        sys.stdout.write(json.dumps(_child(args.child, args.files, args.passes)) + "\n")
        return 0
    trees = [(name, Path(d).resolve()) for name, d in (t.split("=", 1) for t in args.tree)]
    pages = sorted(os.path.abspath(f) for f in glob.glob(args.pages))
    scans = sorted(str(f) for f in args.rss_dir.iterdir() if f.suffix.lower() in IMAGE_EXTS)[: args.rss_n] if args.rss_dir else []
    if len(trees) < 2 or not pages:
        p.error("need two --tree and at least one page")
    runs = []
    for r in range(args.rounds):
        order = trees if r % 2 == 0 else trees[::-1]
        for name, tree in order:
            row = {"round": r, "tree": name, **_measure(tree, "latency", pages, args.passes)}
            if scans:
                row.update({k: v for k, v in _measure(tree, "rss", scans, 1).items() if k != "pipeline"})
            runs.append(row)
            sys.stderr.write(json.dumps(row) + "\n")
    print(f"| tree | extract() median ms per page ({len(pages)} pages x {args.passes} passes, per round) "
          f"| peak RSS MB ({len(scans)} scans, per round) |")
    print("|---|---|---|")
    for name, _ in trees:
        mine = [x for x in runs if x["tree"] == name]
        lat = ", ".join(str(x["median_ms"]) for x in mine)
        rss = ", ".join(str(x.get("peak_rss_mb", "-")) for x in mine)
        print(f"| {name} | {lat} (median {statistics.median(x['median_ms'] for x in mine):.1f}) | {rss} |")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
