"""One synthetic policy: plan → draw → degrade → image and ground truth.

Ground truth (``{split}_{i:05d}.json``, schema ``docpipe-synth/1``)::

    {"schema": "docpipe-synth/1", "split": "train", "seed": 0, "index": 7,
     "layout": "<family>", "font": "<main typeface>", "degradations": ["rotate:-1.20", ..., "jpeg:78"],
     "jpeg_quality": 78, "image": "train_00007.jpg", "width": 990, "height": 1400,
     "fields": {<the 15 keys of docs/schema.md>: normalized value or null},
     "field_text": {<key>: exact printed text of the value or null},
     "lines": [{"text": str, "polygon": [[x, y] x 4], "labels": ["O" | "B-<key>" | "I-<key>" per char],
                "char_boxes": [[x0, y0, x1, y1] per char]}]}

Coordinates are final image pixels (after rotation/perspective). Lines are listed in drawing order;
a value wrapped onto the next line continues with ``I-``. Every labelled span equals its
``field_text``; each field is labelled once, except ``insurer``, which is also labelled where the
company name heads the page. The seal's curved ring text is graphics and is not a line.
"""
from __future__ import annotations

import logging
import random
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from samples.synth import degrade
from samples.synth.canvas import Canvas, Overflow, PageLine
from samples.synth.layouts import RENDERERS
from samples.synth.plan import REFERENCE_LONG_SIDE, DocPlan, compact, make_plan
from samples.synth.rand import np_rng, py_rng
from samples.synth.splits import policy_for

log = logging.getLogger(__name__)

SCHEMA = "docpipe-synth/1"
MAX_COMPACT_LEVEL = 8
A4_RATIO = 2 ** 0.5


def page_size(long_side: int) -> tuple[int, int]:
    """Portrait A4 page: (width, height)."""
    return int(round(long_side / A4_RATIO)), int(long_side)


def render_page(plan: DocPlan) -> tuple[Canvas, DocPlan]:
    """Draw the plan, compacting it until everything fits on the page."""
    width, height = page_size(int(round(REFERENCE_LONG_SIDE * plan.scale)))
    mrng = py_rng(plan.seed, plan.split, plan.index, "margins")
    margins = (plan.px(mrng.randint(60, 90)), plan.px(mrng.randint(45, 75)), plan.px(mrng.randint(45, 70)))
    last_error: Overflow | None = None
    for level in range(MAX_COMPACT_LEVEL + 1):
        attempt = compact(plan, level)
        canvas = Canvas(width, height, attempt.paper, *margins)
        try:
            RENDERERS[attempt.family](canvas, attempt, random.Random(plan.layout_seed))
        except Overflow as exc:
            last_error = exc
            continue
        if level:
            log.debug("document %s/%d fitted at compact level %d", plan.split, plan.index, level)
        return canvas, attempt
    raise RuntimeError(f"document {plan.split}/{plan.index} does not fit: {last_error}")


def _spans(lines: list[PageLine]) -> dict[str, list[str]]:
    spans: dict[str, list[str]] = {}
    for line in lines:
        for ch, lab in zip(line.text, line.labels):
            if lab.startswith("B-"):
                spans.setdefault(lab[2:], []).append(ch)
            elif lab.startswith("I-"):
                spans[lab[2:]][-1] += ch
    return spans


def _check(plan: DocPlan, lines: list[PageLine]) -> None:
    """Every printed field value is labelled, and each labelled span equals the printed value."""
    spans = _spans(lines)
    for key, text in plan.field_text.items():
        got = spans.get(key, [])
        if text is None:
            if got:
                raise RuntimeError(f"{plan.split}/{plan.index}: absent field {key} is labelled")
            continue
        if not got or any(s != text for s in got):
            raise RuntimeError(f"{plan.split}/{plan.index} ({plan.family}): field {key} printed {text!r}, labelled {got!r}")


def _r(v: float) -> float:
    return round(float(v), 1)


def _line_json(line: PageLine) -> dict[str, Any]:
    return {
        "text": line.text,
        "polygon": [[_r(x), _r(y)] for x, y in line.polygon],
        "labels": list(line.labels),
        "char_boxes": [[_r(a), _r(b), _r(c), _r(d)] for a, b, c, d in line.char_boxes],
    }


def file_stem(split: str, index: int) -> str:
    return f"{split}_{index:05d}"


def generate_document(seed: int, split: str, index: int, long_side: int = REFERENCE_LONG_SIDE,
                      family: str | None = None,
                      wordings: Mapping[str, Sequence[str]] | None = None,
                      fonts: Sequence[str] = ()) -> tuple[np.ndarray, dict[str, Any]]:
    """Image (BGR uint8, before JPEG encoding) and ground truth of document ``index``.

    The JPEG quality to encode it with is ``truth["jpeg_quality"]`` (also listed in ``degradations``).
    """
    plan = make_plan(seed, split, index, long_side, family, wordings, fonts)
    canvas, plan = render_page(plan)
    _check(plan, canvas.lines)
    deg = degrade.choose(py_rng(seed, split, index, "degrade"), policy_for(split))
    image = cv2.cvtColor(np.asarray(canvas.image), cv2.COLOR_RGB2BGR)
    matrix = degrade.homography(canvas.width, canvas.height, deg, py_rng(seed, split, index, "warp"), canvas.lines)
    image = degrade.warp_image(image, matrix, deg.border)
    lines = degrade.warp_lines(canvas.lines, matrix)
    image = degrade.photometric(image, deg, np_rng(seed, split, index, "pixels"))
    height, width = image.shape[:2]
    truth: dict[str, Any] = {
        "schema": SCHEMA,
        "split": split,
        "seed": seed,
        "index": index,
        "layout": plan.family,
        "font": plan.face.name,
        "degradations": deg.names(plan.seal),
        "jpeg_quality": deg.jpeg_quality,
        "image": file_stem(split, index) + ".jpg",
        "width": width,
        "height": height,
        "fields": dict(plan.fields),
        "field_text": dict(plan.field_text),
        "lines": [_line_json(line) for line in lines],
    }
    if plan.dev_wordings:
        truth["dev_wordings"] = dict(plan.dev_wordings)
    return image, truth
