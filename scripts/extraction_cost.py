"""Extraction's share of a page's time, measured in one run: an extraction method (ERNIE alone by default) against
the OCR stages of the same pages in the same process.

    python scripts/extraction_cost.py "DIR/*.jpg" [N] [--method model|rules|hybrid|learned]

Prints, over the first N pages (default 30, the first one dropped as warm-up), the median per-page milliseconds
of ``extract`` and of OCR (``normalize`` + ``detect`` + ``recognize``) from each result's ``timings_ms``, and
the ratio of the sums. One worker, one thread.
"""
from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pattern")
    ap.add_argument("n", type=int, nargs="?", default=30)
    ap.add_argument("--method", default="model", choices=("model", "rules", "hybrid", "learned"))
    args = ap.parse_args(argv)
    from pipeline import Engine
    from stages.contracts.config import DocpipeConfig

    config = DocpipeConfig.model_validate({
        "engine": {"workers": 1, "threads_per_worker": 1}, "predictor": {"cpu_threads": 1},
        "extraction": {"method": args.method},
    })
    pages = sorted(glob.glob(args.pattern))[: args.n]
    extract, ocr = [], []
    with Engine(config) as engine:
        for result in engine.extract_many(pages):
            t = result.get("timings_ms") or {}
            if "extract" in t:
                extract.append(float(t["extract"]))
                ocr.append(sum(float(t.get(k, 0.0)) for k in ("normalize", "detect", "recognize")))
    extract, ocr = extract[1:], ocr[1:]
    sys.stdout.write(json.dumps({
        "method": args.method, "pages": len(extract),
        "extract_ms_median": round(statistics.median(extract), 1), "ocr_ms_median": round(statistics.median(ocr), 1),
        "extract_over_ocr": round(sum(extract) / sum(ocr), 4),
    }) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
