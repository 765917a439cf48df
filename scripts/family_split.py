"""Split synthetic folders by layout family, for the unseen-family measure of the learned decision: links to every
document of other families (to train the scorer and fit its calibration on) and to every document of the family (to
measure it on), so that a scorer and a calibration that never saw the family can be compared with the shipped ones.

    python scripts/family_split.py ruled_table OUT --train /work/data/learned/train_plain \\
        --cal /work/data/learned/ocr/devcal --measure /work/data/learned/ocr/dev5

Writes OUT/train_<name> (truth JSON and image, or OCR cache files, of other families), OUT/cal_<name> (other
families) and OUT/measure_<name> (the family only), as symbolic links; docs/extraction_measured.md "An unseen layout family"
has the commands that use them."""
from __future__ import annotations

import argparse
import json
import logging
import os
import pickle
import sys
from pathlib import Path
from typing import Optional, Sequence

log = logging.getLogger("scripts.family_split")


def layout_of(path: Path) -> Optional[str]:
    """The layout family a synthetic document's truth (``.json``) or OCR cache file (``.pkl``) records."""
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8")).get("layout")
    with open(path, "rb") as f:
        return pickle.load(f)["truth"].get("layout")


def link_documents(src: Path, out: Path, family: str, keep_family: bool) -> int:
    """Links in ``out`` to the documents of ``src`` of the family (``keep_family``) or of the others; returns
    how many. A truth folder's images are linked beside their JSON."""
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(src.glob("*.pkl")) or sorted(src.glob("*.json"))
    n = 0
    for path in files:
        if (layout_of(path) == family) != keep_family:
            continue
        for f in [path] + [p for p in src.glob(path.stem + ".*") if p.suffix not in (".json", ".pkl")]:
            target = out / f.name
            if not target.exists():
                os.symlink(f.resolve(), target)
        n += 1
    return n


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("family", help="the layout family to hold out, e.g. ruled_table")
    ap.add_argument("out", type=Path)
    ap.add_argument("--train", type=Path, action="append", default=[], help="train folder (truth or OCR cache)")
    ap.add_argument("--cal", type=Path, action="append", default=[], help="calibration OCR cache (dev)")
    ap.add_argument("--measure", type=Path, action="append", default=[], help="OCR cache to measure on (dev)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for kind, folders, keep in (("train", args.train, False), ("cal", args.cal, False), ("measure", args.measure, True)):
        for src in folders:
            n = link_documents(src, args.out / f"{kind}_{src.name}", args.family, keep)
            log.info("%s_%s: %d documents", kind, src.name, n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
