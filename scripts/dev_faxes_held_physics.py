"""Dev policies faxed with the test split's held-out fax physics (coarser, anisotropic sampling): a dev set for
measuring what the test faxes stress without reading the test split.

    python scripts/dev_faxes_held_physics.py OUT_DIR [--n 40] [--seed 47]

Each document is the dev split's document ``i`` of ``seed`` (dev layouts, dev label wordings), passed through
``samples.synth.variants.fax`` with its held-out branch taken. Nothing here trains a model: the held-out physics
stay out of every training set. docs/accuracy.md calls it ``devaniso``.
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path

import cv2

from samples.synth import variants
from samples.synth.corpus import truth_json
from samples.synth.document import file_stem, generate_document
from samples.synth.plan import REFERENCE_LONG_SIDE
from samples.synth.rand import py_rng


class _HeldOut(random.Random):
    """The variant's own random stream, except that its first draw (the held-out coin) always comes up held out."""

    def __init__(self, base: random.Random):
        super().__init__()
        self._base, self._first = base, True

    def random(self) -> float:
        if self._first:
            self._first = False
            return 0.0
        return self._base.random()

    def uniform(self, a: float, b: float) -> float:
        return self._base.uniform(a, b)

    def randrange(self, *args: int) -> int:
        return self._base.randrange(*args)

    def randint(self, a: int, b: int) -> int:
        return self._base.randint(a, b)

    def getrandbits(self, k: int) -> int:
        return self._base.getrandbits(k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=47)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for i in range(args.n):
        image, truth = generate_document(args.seed, "dev", i, REFERENCE_LONG_SIDE)
        image, truth = variants.fax(image, truth, _HeldOut(py_rng(args.seed, "dev", i, "variant", "fax")), "test")
        stem = file_stem("dev", i)
        ok, buf = cv2.imencode(".png", image[:, :, 0])
        if not ok:
            raise RuntimeError("PNG encoding failed")
        (args.out / f"{stem}.png").write_bytes(buf.tobytes())
        (args.out / f"{stem}.json").write_text(truth_json({**truth, "image": f"{stem}.png"}) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
