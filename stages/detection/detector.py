"""DBNet text detection: resize -> normalize -> Paddle predictor -> DB decode -> page-pixel quads."""
from __future__ import annotations

import logging
import math
from typing import Sequence

import numpy as np

from stages.contracts.registry import resolve_model
from stages.contracts.config import DetectionConfig, PredictorConfig
from stages.detection.db_decode import db_decode, resize_for_detection, sort_reading_order
from stages.predictor import PaddlePredictor
from stages.contracts.types import ResizeTransform, StageError, TextBox

log = logging.getLogger(__name__)

# ImageNet mean and 1/std in 0-255 pixel units (BGR order as PP-OCR det was trained)
DET_MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255.0
DET_INV_STD = 1.0 / (np.array([0.229, 0.224, 0.225], np.float32) * 255.0)


def normalize_det(image: np.ndarray) -> np.ndarray:
    """HxWx3 uint8 (BGR, as PP-OCR det was trained) -> 3xHxW float32."""
    x = (image.astype(np.float32) - DET_MEAN) * DET_INV_STD
    return x.transpose(2, 0, 1)


def canvas_for(h: int, w: int, limit: int) -> tuple[int, int]:
    """The fixed network shape a resized page is padded into. Paddle Inference keeps memory for every
    distinct input shape it has run (measured: +150-500 MB per new shape, not bounded by
    ``set_mkldnn_cache_capacity`` in paddlepaddle 3.3.1), so pages go into a few canvases: long side
    ``limit`` or ``limit/2``, short side 1/2, 3/4 or all of it -> at most 12 shapes, A4 scans share one."""
    long_side = limit if max(h, w) > limit // 2 else limit // 2
    short = min(h, w)
    for frac in (0.5, 0.75, 1.0):
        cand = int(math.ceil(long_side * frac / 32.0)) * 32
        if short <= cand:
            break
    return (long_side, cand) if h >= w else (cand, long_side)


def boxes_from_map(
    prob: np.ndarray, transform: ResizeTransform, page_w: int, page_h: int, cfg: DetectionConfig
) -> list[TextBox]:
    """DB decode a probability map and map the quads back to page pixels, in reading order."""
    found = db_decode(
        prob, thresh=cfg.thresh, box_thresh=cfg.box_thresh, unclip_ratio=cfg.unclip_ratio,
        max_candidates=cfg.max_candidates, min_size=cfg.min_size,
    )
    boxes = []
    for quad, score in found:
        q = transform.to_page(quad)
        q[:, 0] = np.clip(q[:, 0], 0, page_w - 1)
        q[:, 1] = np.clip(q[:, 1], 0, page_h - 1)
        boxes.append(TextBox(polygon=q, score=float(score)))
    order = sort_reading_order([b.polygon for b in boxes])
    return [boxes[i] for i in order]


class TextDetector:
    """Holds one predictor. ``detect_batch`` takes N pages and returns N results (boxes or an error)."""

    def __init__(self, cfg: DetectionConfig, predictor_cfg: PredictorConfig, exec_stream: int | None = None):
        self.cfg = cfg
        self.model = resolve_model(cfg.model, "det", cfg.model_dir)
        self.runner = PaddlePredictor(self.model, predictor_cfg, exec_stream)

    def preprocess(self, image: np.ndarray) -> tuple[np.ndarray, ResizeTransform]:
        """Resize (long side <= limit), pad with white into a fixed canvas, normalize. The transform maps
        network pixels back to page pixels (padding is right/bottom, so it does not shift anything)."""
        resized, transform = resize_for_detection(image, self.cfg.limit_side_len, self.cfg.max_upscale)
        h, w = resized.shape[:2]
        ch, cw = canvas_for(h, w, self.cfg.limit_side_len)
        if (ch, cw) != (h, w):
            canvas = np.full((ch, cw, 3), 255, np.uint8)
            canvas[:h, :w] = resized
            resized = canvas
        return normalize_det(resized), transform

    def detect_batch(self, images: Sequence[np.ndarray]) -> list[list[TextBox] | StageError]:
        results: list[list[TextBox] | StageError] = [StageError("detect", "Internal", "not run")] * len(images)
        prepared: list[tuple[int, np.ndarray, ResizeTransform]] = []
        for i, img in enumerate(images):
            try:
                x, t = self.preprocess(img)
                prepared.append((i, x, t))
            except Exception as exc:  # per-item: a bad page never stops the others
                results[i] = StageError("detect", type(exc).__name__, str(exc))
        # one page per run: every run then has one of the few canvas shapes (a batch dimension that
        # varies would be a new shape each time, and Paddle keeps memory per shape); on CPU a det batch
        # of several pages is not faster per page anyway
        for i, x, t in prepared:
            try:
                prob = self.runner.run_one(x[None])[0, 0]
                h, w = images[i].shape[:2]
                results[i] = boxes_from_map(prob, t, w, h, self.cfg)
            except Exception as exc:
                results[i] = StageError("detect", type(exc).__name__, str(exc))
        return results
