"""DBNet text detection: resize -> normalize -> Paddle predictor -> DB decode -> page-pixel quads."""
from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from models.registry import resolve_model
from pipeline.config import DetectionConfig, PredictorConfig
from stages.detection.db_decode import db_decode, resize_for_detection, sort_reading_order
from stages.predictor import PaddleRunner
from stages.types import ResizeTransform, StageError, TextBox

log = logging.getLogger(__name__)

_MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255.0
_INV_STD = 1.0 / (np.array([0.229, 0.224, 0.225], np.float32) * 255.0)


def normalize_det(image: np.ndarray) -> np.ndarray:
    """HxWx3 uint8 (BGR, as PP-OCR det was trained) -> 3xHxW float32."""
    x = (image.astype(np.float32) - _MEAN) * _INV_STD
    return x.transpose(2, 0, 1)


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
        self.runner = PaddleRunner(self.model, predictor_cfg, exec_stream)

    def preprocess(self, image: np.ndarray) -> tuple[np.ndarray, ResizeTransform]:
        resized, transform = resize_for_detection(image, self.cfg.limit_side_len, self.cfg.max_upscale)
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
        # pages with the same network shape run as one batch (A4 scans usually share it)
        groups: dict[tuple[int, int], list[tuple[int, np.ndarray, ResizeTransform]]] = {}
        for item in prepared:
            groups.setdefault(item[1].shape[1:], []).append(item)
        for items in groups.values():
            try:
                probs = self.runner.run_one(np.stack([x for _, x, _ in items]))
            except Exception as exc:
                for i, _, _ in items:
                    results[i] = StageError("detect", type(exc).__name__, str(exc))
                continue
            for (i, x, t), prob in zip(items, probs):
                h, w = images[i].shape[:2]
                try:
                    results[i] = boxes_from_map(prob[0], t, w, h, self.cfg)
                except Exception as exc:
                    results[i] = StageError("detect", type(exc).__name__, str(exc))
        return results
