"""``extract()`` single-page latency and peak RSS of two source trees (before/after a change), measured in one run.

Latency: one long-lived process per tree (``PYTHONPATH`` set to the tree), both alive at once; the parent sends
them the same pages call by call, alternating which goes first, so each pair of calls sees the same machine load.
Every page goes through each process once to warm up (predictors built, input shapes seen), then ``--passes``
timed passes, then ``--overhead-calls`` calls on an empty file (an error record at decoding: the cost of the call
machinery alone). Reported: each tree's median ms per call and the median of the per-call ratios (second / first).

Peak RSS: a fresh process per tree runs ``extract()`` over the first ``--rss-n`` images of ``--rss-dir`` (clean
scans) and reports its peak resident set (``ru_maxrss``); ``--rss-rounds`` rounds, the trees' order alternating.

    python scripts/bench_extract_call.py --tree before=/path/to/base --tree after=. \\
        --pages 'samples/pages/*.jpg' --passes 3 --overhead-calls 20 --rss-dir /work/data/dev5 --rss-n 20 --rss-rounds 2 --json out.json
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
import tempfile
import time
from pathlib import Path

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".tif", ".tiff")


def _serve() -> None:
    """Child: one page path per stdin line -> one JSON line with the call's milliseconds."""
    import pipeline
    from pipeline import extract

    sys.stdout.write(json.dumps({"pipeline": os.path.dirname(pipeline.__file__)}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        t0 = time.perf_counter()
        res = extract(line.rstrip("\n"))
        ms = (time.perf_counter() - t0) * 1000.0
        sys.stdout.write(json.dumps({"ms": ms, "errors": len(res["errors"])}) + "\n")
        sys.stdout.flush()


def _rss(files: list[str]) -> None:
    """Child: extract() over ``files``; prints the process's peak RSS in MB."""
    from pipeline import extract

    for f in files:
        if extract(f)["errors"]:
            raise SystemExit(f"extract() failed on {f}")
    sys.stdout.write(json.dumps({"peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)}) + "\n")


class _Server:
    def __init__(self, tree: Path):
        env = dict(os.environ, PYTHONPATH=str(tree))
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", "serve"], env=env, cwd=tree,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pipeline = json.loads(self.proc.stdout.readline())["pipeline"]

    def call(self, page: str, errors_ok: bool = False) -> float:
        self.proc.stdin.write(page + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        if out["errors"] and not errors_ok:
            raise SystemExit(f"{self.pipeline}: extract() failed on {page}")
        return out["ms"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def _alternate(servers: list[tuple[str, "_Server"]], pages: list[str], errors_ok: bool = False) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name, _ in servers}
    for k, page in enumerate(pages):
        for name, server in (servers if k % 2 == 0 else servers[::-1]):
            times[name].append(server.call(page, errors_ok))
    return times


def _summary(times: dict[str, list[float]], names: list[str]) -> dict:
    ratios = [y / x for x, y in zip(times[names[0]], times[names[1]])]
    return {"times_ms": {n: [round(t, 2) for t in times[n]] for n in names},
            "median_ms": {n: round(statistics.median(times[n]), 2) for n in names},
            "median_ratio": round(statistics.median(ratios), 4)}


def latency(trees: list[tuple[str, Path]], pages: list[str], passes: int, overhead_calls: int, empty: str) -> dict:
    servers = [(name, _Server(tree)) for name, tree in trees]
    names = [name for name, _ in trees]
    try:
        _alternate(servers, pages)  # warm-up
        pages_times = _alternate(servers, pages * passes)
        # the call machinery alone: a document that fails at decoding (an empty file) comes back as an error record
        machinery = _alternate(servers, [empty] * overhead_calls, errors_ok=True)
    finally:
        for _, server in servers:
            server.close()
    return {"pipelines": [s.pipeline for _, s in servers], "pages": _summary(pages_times, names),
            "empty_file": _summary(machinery, names)}


def peak_rss(trees: list[tuple[str, Path]], scans: list[str], rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {name: [] for name, _ in trees}
    for r in range(rounds):
        for name, tree in (trees if r % 2 == 0 else trees[::-1]):
            env = dict(os.environ, PYTHONPATH=str(tree))
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "rss", *scans], env=env,
                                  cwd=tree, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{tree}: exit {done.returncode}\n{done.stderr[-3000:]}")
            out[name].append(json.loads(done.stdout.strip().splitlines()[-1])["peak_rss_mb"])
            sys.stderr.write(f"rss {name}: {out[name][-1]} MB\n")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tree", action="append", default=[], metavar="NAME=DIR", help="a source tree (exactly two)")
    p.add_argument("--pages", default="samples/pages/*.jpg", help="glob of the latency pages")
    p.add_argument("--passes", type=int, default=3, help="timed passes over the latency pages")
    p.add_argument("--overhead-calls", type=int, default=20, help="calls with an empty file (the call machinery alone)")
    p.add_argument("--rss-dir", type=Path, help="folder of clean scans for the peak-RSS loop")
    p.add_argument("--rss-n", type=int, default=20)
    p.add_argument("--rss-rounds", type=int, default=2, help="peak RSS: each tree this many times, order alternating")
    p.add_argument("--json", type=Path, help="write every measurement here")
    p.add_argument("--child", choices=("serve", "rss"), help=argparse.SUPPRESS)
    p.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child == "serve":
        _serve()
        return 0
    if args.child == "rss":
        _rss(args.files)
        return 0
    trees = [(name, Path(d).resolve()) for name, d in (t.split("=", 1) for t in args.tree)]
    pages = sorted(os.path.abspath(f) for f in glob.glob(args.pages))
    if len(trees) != 2 or not pages:
        p.error("need exactly two --tree and at least one page")
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.jpg"
        empty.write_bytes(b"")
        lat = latency(trees, pages, args.passes, args.overhead_calls, str(empty))
    report: dict = {"pages": len(pages), "passes": args.passes, "latency": lat}
    if args.rss_dir:
        scans = sorted(str(f) for f in args.rss_dir.iterdir() if f.suffix.lower() in IMAGE_EXTS)[: args.rss_n]
        report["scans"] = len(scans)
        report["peak_rss_mb"] = peak_rss(trees, scans, args.rss_rounds)
    print(f"| tree | extract() ms per page, median of {len(pages) * args.passes} calls | extract() ms on an empty "
          f"file, median of {args.overhead_calls} | peak RSS MB, extract() over {report.get('scans', 0)} scans |")
    print("|---|---|---|---|")
    for name, _ in trees:
        rss = ", ".join(str(x) for x in report.get("peak_rss_mb", {}).get(name, [])) or "-"
        print(f"| {name} | {lat['pages']['median_ms'][name]} | {lat['empty_file']['median_ms'][name]} | {rss} |")
    print(f"\nmedian per-call ratio {trees[1][0]} / {trees[0][0]}: pages {lat['pages']['median_ratio']}, "
          f"empty file {lat['empty_file']['median_ratio']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
