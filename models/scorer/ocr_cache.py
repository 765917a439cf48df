"""OCR a folder of synthetic pages once and keep what extraction needs (lines with character probabilities and
CTC frames, page sizes) as one pickle per document, so that training and dev measurements replay extraction
without running detection and recognition again.

    nice -n 10 env PYTHONPATH=$PWD python -m models.scorer.ocr_cache /work/data/dev5 /work/data/learned/ocr/dev5

A document already cached is skipped, so an interrupted run resumes where it stopped."""
from __future__ import annotations

import argparse
import logging
import pickle
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from stages.contracts.types import Page, TextLine

log = logging.getLogger("models.scorer.ocr_cache")


@dataclass(frozen=True)
class CachedDocument:
    """One document's OCR: lines per page, page stand-ins of the right size (no pixels), the ground truth."""

    name: str
    lines: list[list[TextLine]]
    pages: list[Page]
    truth: dict  # the generator's ground truth JSON minus its per-line annotations
    timings: dict  # OCR ms per stage (empty for caches written without them)


def _stand_in(page: Page) -> Page:
    """The page without its pixels (a read-only view of one black pixel with the page's shape)."""
    blank = np.broadcast_to(np.zeros((1, 1, 3), np.uint8), page.image.shape)
    return replace(page, image=blank, second_look=None)


def load_cached(path: Path) -> CachedDocument:
    with open(path, "rb") as f:
        doc = pickle.load(f)
    pages = [replace(p, image=np.broadcast_to(np.zeros((1, 1, 3), np.uint8), shape)) for p, shape in doc["pages"]]
    return CachedDocument(doc["name"], doc["lines"], pages, doc["truth"], doc.get("timings", {}))


def load_folder(folder: Path) -> list[CachedDocument]:
    return [load_cached(p) for p in sorted(Path(folder).glob("*.pkl"))]


def cache_folder(src: Path, out: Path, config_path: Optional[str] = None) -> int:
    from pipeline.core.processor import DocumentProcessor
    from pipeline.tools.evaluate import find_documents
    from stages.contracts.config import load_config

    out.mkdir(parents=True, exist_ok=True)
    docs = find_documents(src)
    todo = [(img, truth) for img, truth in docs if not (out / (img.stem + ".pkl")).exists()]
    log.info("%d documents, %d to read", len(docs), len(todo))
    if not todo:
        return 0
    proc = DocumentProcessor(load_config(config_path))
    t0 = time.perf_counter()
    for i, (img, truth) in enumerate(todo):
        [state] = proc.open([str(img)], [img.name])
        try:  # the processor's own page flow: decode, detect and recognize, page by page
            for group in proc._page_groups([state]):
                proc._read_group(group)
        finally:
            if state.stream is not None:
                state.stream.close()
        if state.error is not None:
            log.warning("document %d failed: %s", i, state.error.type)
            continue
        record = {
            "name": img.name,
            "lines": state.lines,
            "pages": [(replace(_stand_in(p), image=None), p.image.shape) for p in state.pages],
            "truth": {k: v for k, v in truth.items() if k != "lines"},
            "timings": dict(state.timings),  # ms per stage: decode, normalize, detect, recognize
        }
        tmp = out / (img.stem + ".pkl.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(record, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.rename(out / (img.stem + ".pkl"))
        if (i + 1) % 10 == 0:
            log.info("%d/%d read, %.2f s/document", i + 1, len(todo), (time.perf_counter() - t0) / (i + 1))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", type=Path, help="folder of page images with ground truth JSON beside them")
    ap.add_argument("out", type=Path, help="folder for the per-document pickles")
    ap.add_argument("--config", default=None, help="docpipe YAML config (default: the shipped default)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    return cache_folder(args.src, args.out, args.config)


if __name__ == "__main__":
    sys.exit(main())
