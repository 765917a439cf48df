"""A PNG grid of thumbnail pages: one per layout family plus pages showing the heavier degradations.

    python -m samples.synth.contact_sheet samples/contact_sheet.png [--seed 0]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from samples.synth import degrade
from samples.synth.document import generate_document
from samples.synth.plan import make_plan
from samples.synth.rand import py_rng
from samples.synth.splits import FAMILIES, policy_for

THUMB_W, THUMB_H, CAPTION_H, COLS = 300, 424, 34, 4
EXTRA_DEGRADATIONS: tuple[str, ...] = ("binarize", "crease", "stain", "lowres")


@dataclass(frozen=True)
class Pick:
    split: str
    index: int
    reason: str


def pick_documents(seed: int, search: int = 400) -> list[Pick]:
    """The first document of each family (train where the family is shared, test otherwise), then
    documents showing each of :data:`EXTRA_DEGRADATIONS`."""
    picks: list[Pick] = []
    for family in FAMILIES:
        for split in ("train", "test"):
            found = next((i for i in range(search) if make_plan(seed, split, i, 200).family == family), None)
            if found is not None:
                picks.append(Pick(split, found, family))
                break
    taken = {(p.split, p.index) for p in picks}
    for name in EXTRA_DEGRADATIONS:
        split = "test" if name in ("binarize", "crease") else "train"
        for i in range(search):
            deg = degrade.choose(py_rng(seed, split, i, "degrade"), policy_for(split))
            if (split, i) not in taken and any(n.split(":")[0] == name for n in deg.names(False)):
                picks.append(Pick(split, i, name))
                taken.add((split, i))
                break
    return picks


def thumbnail(image: np.ndarray) -> Image.Image:
    small = cv2.resize(image, (THUMB_W, THUMB_H), interpolation=cv2.INTER_AREA)
    return Image.fromarray(cv2.cvtColor(small, cv2.COLOR_BGR2RGB))


def make_sheet(seed: int = 0, long_side: int = 1000) -> Image.Image:
    picks = pick_documents(seed)
    rows = (len(picks) + COLS - 1) // COLS
    sheet = Image.new("RGB", (COLS * (THUMB_W + 10) + 10, rows * (THUMB_H + CAPTION_H + 10) + 10), (70, 70, 70))
    draw = ImageDraw.Draw(sheet)
    try:
        font = ImageFont.load_default(size=13)
    except TypeError:  # Pillow < 10.1
        font = ImageFont.load_default()
    for k, pick in enumerate(picks):
        image, truth = generate_document(seed, pick.split, pick.index, long_side)
        encoded = cv2.imdecode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, truth["jpeg_quality"]])[1],
                               cv2.IMREAD_COLOR)
        x = 10 + (k % COLS) * (THUMB_W + 10)
        y = 10 + (k // COLS) * (THUMB_H + CAPTION_H + 10)
        sheet.paste(thumbnail(encoded), (x, y))
        degs = ",".join(d.split(":")[0] for d in truth["degradations"] if not d.startswith("jpeg"))
        draw.text((x + 2, y + THUMB_H + 2), f"{pick.split}/{pick.index} {truth['layout']} | {truth['font']}",
                  fill=(255, 255, 255), font=font)
        draw.text((x + 2, y + THUMB_H + 17), degs or "clean", fill=(200, 200, 200), font=font)
    return sheet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="PNG path")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sheet = make_sheet(args.seed)
    sheet.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(args.out, optimize=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
