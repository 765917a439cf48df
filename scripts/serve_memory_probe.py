"""Peak memory of ``docpipe serve``'s process tree (API process + engine workers, VmRSS from /proc) while it
answers one large multi-page bitonal TIFF on POST /v1/extract. Prints one JSON line (docs/service.md).

    PYTHONPATH=$PWD python scripts/serve_memory_probe.py --pages 30 --side 7500 [--max-pixels-per-document N]

It starts its own server (one engine worker process) on a free 127.0.0.1 port with a fresh job store, waits
for /readyz, samples the tree's memory every 50 ms during the request, and stops the server.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.pipeline.service.serve_proc import serving, tree_rss_bytes  # noqa: E402
from tests.pipeline.service.test_limits import PeakRss, bitonal_tiff  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=30)
    ap.add_argument("--side", type=int, default=7500, help="page width and height in pixels")
    ap.add_argument("--max-pixels-per-document", type=int, help="input.max_pixels_per_document (default: shipped)")
    args = ap.parse_args()
    tiff = bitonal_tiff(args.pages, args.side)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        inp = f"input: {{max_pixels_per_document: {args.max_pixels_per_document}}}\n" if args.max_pixels_per_document else ""
        cfg = tmp / "serve.yaml"
        cfg.write_text(f"engine: {{mode: processes, workers: 1}}\n{inp}service: {{data_dir: '{tmp / 'store'}'}}\n")
        with serving(cfg, tmp / "server.log") as server:
            url, proc = server.url, server.proc
            base = tree_rss_bytes(proc.pid)
            t0 = time.monotonic()
            with PeakRss(proc.pid) as mem:
                r = httpx.post(url + "/v1/extract", content=tiff, timeout=3600)
            res = r.json()
            print(json.dumps({"pages": args.pages, "side": args.side, "tiff_bytes": len(tiff), "status": r.status_code,
                              "result_pages": len(res.get("pages", [])), "errors": [e["type"] for e in res.get("errors", [])],
                              "seconds": round(time.monotonic() - t0, 1), "ready_tree_mb": round(base / 2**20),
                              "peak_tree_mb": round(mem.peak / 2**20)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
