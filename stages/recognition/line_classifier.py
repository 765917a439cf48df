"""Optional 0/180 degree text-line classifier (ppocr mobile v2 cls)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from stages.contracts.registry import resolve_model
from stages.contracts.config import PredictorConfig, RecognitionConfig
from stages.predictor import PaddlePredictor
from stages.recognition.crop import resize_to_bucket

_CLS_HEIGHT, _CLS_WIDTH = 48, 192
CLS_BATCH_SIZE = 16  # crops per batch; partial batches padded, so one input shape per batch size


class OrientationClassifier:
    def __init__(self, cfg: RecognitionConfig, predictor_cfg: PredictorConfig):
        self.cfg = cfg
        self.runner = PaddlePredictor(resolve_model(cfg.cls_model, "cls", cfg.cls_model_dir), predictor_cfg)

    def flipped_probs(self, crops: Sequence[np.ndarray], batch_size: int | None = None) -> np.ndarray:
        """Probability that each crop is upside down (N,). Batches have ``batch_size`` rows (default
        ``CLS_BATCH_SIZE``), partial ones padded: one input shape per batch size."""
        out = np.zeros(len(crops), np.float32)
        bs = batch_size or CLS_BATCH_SIZE
        for start in range(0, len(crops), bs):
            chunk = crops[start : start + bs]
            x = np.zeros((bs, 3, _CLS_HEIGHT, _CLS_WIDTH), np.float32)  # one shape: bounded memory
            for j, c in enumerate(chunk):
                x[j] = resize_to_bucket(c, _CLS_HEIGHT, (_CLS_WIDTH,))[0]
            out[start : start + len(chunk)] = self.runner.run_one(x)[: len(chunk), 1]
        return out

    def upright(self, crops: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Rotate crops the classifier reads as upside down (probability above ``cls_thresh``)."""
        out = list(crops)
        for j, p in enumerate(self.flipped_probs(out)):
            if p > 0.5 and float(p) >= self.cfg.cls_thresh:
                out[j] = np.ascontiguousarray(np.rot90(out[j], 2))
        return out
