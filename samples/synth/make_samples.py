"""Regenerate the committed sample pages ``samples/pages/`` (10 documents with ground truth).

Exact command (from the repository root)::

    python -m samples.synth.make_samples samples/pages

Seed 0, long side 1050 px, JPEG quality 85. The selection covers every layout family: the six
shared families from ``train``, the two held-out families (``column_table``, ``underline_form``)
from ``test``, one ``test`` page in a shared family with a held-out font, and one ``train`` page
with optional fields absent (null in its truth).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from samples.synth.corpus import iter_write
from samples.synth.plan import make_plan
from samples.synth.splits import HELD_OUT_FAMILIES, HELD_OUT_FONTS, SHARED_FAMILIES

SEED = 0
LONG_SIDE = 1050
JPEG_QUALITY = 85
SEARCH = 500


def choose(seed: int = SEED) -> list[tuple[str, int]]:
    plans = {split: [make_plan(seed, split, i, 200) for i in range(SEARCH)] for split in ("train", "test")}
    picks: list[tuple[str, int]] = []
    for family in SHARED_FAMILIES:
        picks.append(("train", next(p.index for p in plans["train"] if p.family == family)))
    for family in HELD_OUT_FAMILIES:
        picks.append(("test", next(p.index for p in plans["test"] if p.family == family)))
    picks.append(("test", next(p.index for p in plans["test"]
                               if p.family in SHARED_FAMILIES and p.face.name in HELD_OUT_FONTS
                               and ("test", p.index) not in picks)))
    picks.append(("train", next(p.index for p in plans["train"] if p.facts.absent and ("train", p.index) not in picks)))
    return picks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default="samples/pages")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        indices = [i for s, i in choose() if s == split]
        for written in iter_write(out, len(indices), SEED, split, workers=1, long_side=LONG_SIDE,
                                  jpeg_quality=JPEG_QUALITY, indices=indices):
            print(f"{split}_{written.index:05d}: {written.layout:15s} {written.font:22s} {written.image_bytes // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
