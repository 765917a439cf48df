"""Cost of painting over leader dots (stages/page/leaders.py) per page, beside the boundary finder as a peer.

    python scripts/leader_dots_cost.py "data/dev/*.jpg" --pages 80 --rounds 2

Each round times both steps on every page, interleaved, in one process; prints JSON with the median and mean ms
per page of each step and their ratio.
"""
from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stages.contracts.config import PageConfig  # noqa: E402
from stages.contracts.types import Page  # noqa: E402
from stages.page.boundary import normalize_boundary  # noqa: E402
from stages.page.leaders import erase_leaders  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pattern", help="glob of page images")
    ap.add_argument("--pages", type=int, default=80)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    files = sorted(glob.glob(args.pattern))[: args.pages]
    images = [im for im in (cv2.imread(f) for f in files) if im is not None]
    if not images:
        ap.error(f"no readable images match {args.pattern}")
    cfg = PageConfig()
    erase, boundary = [], []
    for _ in range(args.rounds):
        for im in images:
            t0 = time.perf_counter()
            erase_leaders(Page(0, im))
            t1 = time.perf_counter()
            normalize_boundary(Page(0, im), cfg)
            t2 = time.perf_counter()
            erase.append((t1 - t0) * 1e3)
            boundary.append((t2 - t1) * 1e3)
    out = {"pages": len(images), "rounds": args.rounds,
           "erase_leaders_ms": {"median": round(statistics.median(erase), 1), "mean": round(statistics.mean(erase), 1)},
           "boundary_ms": {"median": round(statistics.median(boundary), 1),
                           "mean": round(statistics.mean(boundary), 1)},
           "ratio_of_means": round(statistics.mean(erase) / statistics.mean(boundary), 2)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
