"""``docpipe bench``: docpipe against peer OCR engines on the same pages, in one run.

Every engine runs in its own subprocess (so peak RSS is its own), after a warm-up, over the same page
list; CER is computed against the ground-truth lines next to each page (``page.jpg`` + ``page.json``)."""
from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

import numpy as np

from pipeline.metrics import CERCount, page_cer, text_polygons, total_cer

log = logging.getLogger(__name__)

DEFAULT_PAGES = Path(__file__).resolve().parent.parent / "samples" / "pages"
IMAGE_EXTS = (".jpg", ".jpeg", ".png")
ENGINES = ("docpipe_engine", "docpipe_loop", "rapidocr_onnxruntime", "rapidocr_paddle")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pages", type=Path, default=DEFAULT_PAGES, help="directory of page images (+ JSON truth)")
    p.add_argument("--min-pages", type=int, default=0, help="repeat the page list until it has this many")
    p.add_argument("--engines", default=",".join(ENGINES), help=f"comma list from {', '.join(ENGINES)}")
    p.add_argument("--threads", type=int, default=2, help="CPU threads given to each engine")
    p.add_argument("--warmup", type=int, default=2, help="pages run before timing")
    p.add_argument("--config", help="docpipe YAML config for the docpipe engines")
    p.add_argument("--soak", type=int, default=0, help="pages for a memory soak of docpipe_engine (e.g. 1000)")
    p.add_argument("--json", type=Path, help="write the full report here")


def find_pages(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.suffix.lower() in IMAGE_EXTS)


def truth_lines(page: Path) -> Optional[list[tuple[str, np.ndarray]]]:
    gt = page.with_suffix(".json")
    if not gt.is_file():
        return None
    data = json.loads(gt.read_text(encoding="utf-8"))
    return text_polygons(data.get("lines", []))


def run_engine(name: str, pages: list[str], args: argparse.Namespace, checkpoints: list[int]) -> dict[str, Any]:
    spec = {"pages": pages, "warmup": args.warmup, "threads": args.threads, "config": args.config,
            "soak_checkpoints": checkpoints}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pipeline.bench_runners", name, f.name],
            capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
    finally:
        os.unlink(f.name)
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            return json.loads(line[len("BENCH_RESULT "):])
    return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}"}


def score(res: dict[str, Any], pages: list[str], truth: dict[str, Any]) -> None:
    counts: list[CERCount] = []
    for path, out in zip(pages, res.pop("outputs", [])):
        ref = truth.get(path)
        if ref is None:
            continue
        hyp = [(t, np.asarray(poly, np.float32)) for page in out for t, poly in page]
        counts.append(page_cer(ref, hyp))
    res["cer"] = round(total_cer(counts), 4) if counts else None
    res["pages_per_s"] = round(res["pages"] / res["seconds"], 3) if res.get("seconds") else None


def report(results: dict[str, dict[str, Any]]) -> str:
    base = results.get("rapidocr_onnxruntime", {}).get("pages_per_s")
    rows = [f"{'engine':<22}{'pages/s':>9}{'ratio':>8}{'CER':>8}{'peak RSS MB':>13}"]
    for name, r in results.items():
        if "error" in r:
            rows.append(f"{name:<22}  failed: {r['error'][:200]}")
            continue
        ratio = f"{r['pages_per_s'] / base:.2f}x" if base and r.get("pages_per_s") else "-"
        cer = f"{100 * r['cer']:.2f}%" if r.get("cer") is not None else "-"
        rows.append(f"{name:<22}{r['pages_per_s']:>9.3f}{ratio:>8}{cer:>8}{r['peak_rss_mb']:>13.0f}")
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    if not args.pages.is_dir():
        sys.stderr.write(f"docpipe bench: {args.pages} is not a directory\n")
        return 2
    pages = [str(p) for p in find_pages(args.pages)]
    if not pages:
        sys.stderr.write(f"docpipe bench: no images in {args.pages}\n")
        return 2
    truth = {p: t for p in pages if (t := truth_lines(Path(p))) is not None}
    base_pages = list(pages)
    while len(pages) < args.min_pages:
        pages += base_pages
    pages = pages[: max(args.min_pages, len(base_pages))]
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        sys.stderr.write(f"docpipe bench: unknown engine(s) {unknown}; choose from {ENGINES}\n")
        return 2
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        sys.stderr.write(f"bench: {name} on {len(pages)} pages ...\n")
        res = run_engine(name, pages, args, [])
        if "error" not in res:
            score(res, pages, truth)
        results[name] = res
    out: dict[str, Any] = {"pages": len(pages), "distinct_pages": len(base_pages), "threads": args.threads,
                           "cpu_count": os.cpu_count(), "results": results}
    if "docpipe_engine" in results and "docpipe_loop" in results:
        a, b = results["docpipe_engine"].get("pages_per_s"), results["docpipe_loop"].get("pages_per_s")
        if a and b:
            out["engine_vs_loop"] = round(a / b, 3)
    if args.soak:
        soak_pages = (base_pages * (args.soak // len(base_pages) + 1))[: args.soak]
        marks = sorted({min(100, args.soak), args.soak})
        sys.stderr.write(f"bench: memory soak of docpipe_engine over {args.soak} pages ...\n")
        soak = run_engine("docpipe_engine", soak_pages, args, marks)
        soak.pop("outputs", None)
        out["soak"] = soak
    sys.stdout.write(report(results) + "\n")
    if "engine_vs_loop" in out:
        sys.stdout.write(f"extract_many vs extract() loop: {out['engine_vs_loop']:.2f}x\n")
    if "soak" in out:
        sys.stdout.write(f"soak RSS checkpoints (MB): {out['soak'].get('rss_checkpoints_mb')}\n")
    if args.json:
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0 if all("error" not in r for r in results.values()) else 1
