"""CTC text recognition over crops batched in width buckets, with greedy or prefix-beam decoding."""
from __future__ import annotations

import logging
from typing import Optional, Sequence

import numpy as np

from stages.contracts.registry import resolve_model
from stages.contracts.config import PredictorConfig, RecognitionConfig
from stages.predictor import PaddlePredictor
from stages.recognition.crop import resize_to_bucket, resize_to_height, target_width
from stages.recognition.ctc import CharDict, CTCResult, greedy_decode, prefix_beam_search
from stages.recognition.packing import Placement, frame_span, pack_rows
from stages.contracts.types import FrameProbs, Recognized, StageError

log = logging.getLogger(__name__)

CTC_STRIDE = 8  # PP-OCR rec models emit one frame per 8 input pixels
# Paddle keeps memory for every distinct input shape it has run (+150-500 MB per new recognition shape), so every
# batch of a width bucket has one shape: its width from this list, BATCH_PIXELS // width rows, partial batches
# padded (peak RSS on the samples 2.0 -> 0.9 GB, docs/decisions.md)
WIDTH_BUCKETS = (128, 192, 256, 384, 512, 768, 1024, 1536, 2048)
BATCH_PIXELS = 2048
# packing: crops up to PACK_WIDTH wide go side by side into rows of PACK_WIDTH pixels, PACK_GAP blank pixels
# apart, PACK_ROWS rows per batch -- one input shape, few padded pixels. 512-px rows: line CER 0.75% on the
# samples against 1.04% for 2048, 0.99% for 1024, 0.83% for 768, recognition time -27% (docs/decisions.md)
PACK_WIDTH = 512
PACK_GAP = 32
PACK_ROWS = 4
# a line's softmax columns kept for constrained re-decoding: the classes reaching KEEP_MIN_PROB in some frame,
# the KEEP_MAX_COLUMNS strongest at most (plus the field alphabets)
KEEP_MIN_PROB = 1e-3
KEEP_MAX_COLUMNS = 64


def keep_columns(probs: np.ndarray, min_prob: float, max_columns: int, always: Optional[np.ndarray]) -> FrameProbs:
    """Keep the blank, every class that reaches ``min_prob`` in some frame (at most ``max_columns``, the
    strongest first) and ``always`` (field alphabets), for constrained re-decoding later."""
    peak = probs.max(axis=0)
    cand = np.flatnonzero(peak >= min_prob)
    if cand.size > max_columns:
        cand = cand[np.argsort(-peak[cand], kind="stable")[:max_columns]]
    parts = [np.array([0]), cand] + ([always] if always is not None else [])
    cols = np.unique(np.concatenate(parts)).astype(np.int32)
    return FrameProbs(columns=cols, probs=np.ascontiguousarray(probs[:, cols], dtype=np.float32))


def _error(exc: Exception) -> StageError:
    return StageError("recognize", type(exc).__name__, str(exc))


class TextRecognizer:
    """Holds the rec predictor (and the optional 0/180 classifier). N crops in -> N results out."""

    def __init__(self, cfg: RecognitionConfig, predictor_cfg: PredictorConfig, exec_stream: int | None = None):
        self.cfg = cfg
        self.model = resolve_model(cfg.model, "rec", cfg.model_dir, cfg.dict_path)
        assert self.model.characters is not None
        self.chars = CharDict.from_chars(self.model.characters, use_space_char=True)
        self.runner = PaddlePredictor(self.model, predictor_cfg, exec_stream)
        self.always_keep: Optional[np.ndarray] = None
        self.classifier = None
        if cfg.use_cls:
            from stages.recognition.line_classifier import OrientationClassifier

            self.classifier = OrientationClassifier(cfg, predictor_cfg)

    def set_always_keep(self, charset: str) -> None:
        """Characters whose probabilities are always stored with a line (for constrained re-decoding)."""
        self.always_keep = self.chars.encode_charset(charset) if charset else None

    def decode(self, probs: np.ndarray, allowed: Optional[np.ndarray] = None) -> CTCResult:
        if self.cfg.decoder == "greedy" and allowed is None:
            return greedy_decode(probs)
        return prefix_beam_search(probs, beam_width=self.cfg.beam_width, allowed=allowed, max_candidates=32)

    def recognize_batch(self, crops: Sequence[np.ndarray],
                        groups: Optional[Sequence[int]] = None) -> list[Recognized | StageError]:
        """N crops in, N results out (in order). ``groups`` (one key per crop, e.g. its document) keeps packed rows
        within a group, so a document reads the same whatever other documents share its batch."""
        results: list[Recognized | StageError] = [StageError("recognize", "Internal", "not run")] * len(crops)
        if self.classifier is not None:
            crops = self.classifier.upright(crops)
        todo = range(len(crops))
        if self.cfg.packing:  # crops up to PACK_WIDTH are packed; wider ones go through the width buckets
            todo = self._recognize_packed(crops, results, groups)
        by_bucket: dict[int, list[tuple[int, np.ndarray, int]]] = {}
        for i in todo:
            try:
                x, used, bucket = resize_to_bucket(crops[i], self.cfg.image_height, WIDTH_BUCKETS)
                by_bucket.setdefault(bucket, []).append((i, x, used))
            except Exception as exc:
                results[i] = _error(exc)
        for bucket, items in by_bucket.items():
            rows = self.rows_for(bucket)
            for start in range(0, len(items), rows):
                chunk = items[start : start + rows]
                batch = np.zeros((rows,) + chunk[0][1].shape, np.float32)  # fixed shape per bucket
                for j, (_, x, _) in enumerate(chunk):
                    batch[j] = x
                self._run_batch(batch, [(i, j, None, used) for j, (i, _, used) in enumerate(chunk)], results)
        return results

    def _run_batch(self, batch: np.ndarray, members: Sequence[tuple[int, int, Optional[Placement], int]],
                   results: list[Recognized | StageError]) -> None:
        """Run one fixed-shape batch and decode its members ``(result index, row, placement in a packed row or
        None for a whole row, used width)``; a failed run fails every member, a failed decode only its own."""
        try:
            out, check = self._run(batch)
        except Exception as exc:
            for i, _, _, _ in members:
                results[i] = _error(exc)
            return
        for i, row, placement, used in members:
            try:
                probs = out[row]
                best = check[row] if check is not None else None
                if placement is not None:
                    f0, f1 = frame_span(placement, CTC_STRIDE, out.shape[1])
                    probs = probs[f0:f1]
                    best = best[f0:f1] if best is not None else None
                results[i] = self._finish(probs, used, best)
            except Exception as exc:
                results[i] = _error(exc)

    def _run(self, batch: np.ndarray) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """The class probabilities (batch x frames x classes) and, for a model with a check head
        (models/recognizer/check.py), that head's best class of each frame (batch x frames, integers)."""
        outputs = self.runner.run(batch)
        probs = next(o for o in outputs if o.ndim == 3)
        best = next((o for o in outputs if o.ndim == 2 and np.issubdtype(o.dtype, np.integer)), None)
        return probs, best

    def _recognize_packed(self, crops: Sequence[np.ndarray], results: list[Recognized | StageError],
                          groups: Optional[Sequence[int]] = None) -> list[int]:
        """Crops packed side by side into rows of ``PACK_WIDTH`` (:mod:`stages.recognition.packing`); every batch
        is ``PACK_ROWS`` such rows, one shape for the whole run. Returns the indices of crops too wide to pack."""
        cfg = self.cfg
        resized: list[tuple[int, np.ndarray]] = []
        wide: list[int] = []
        for i, crop in enumerate(crops):
            try:
                if target_width(crop, cfg.image_height) > PACK_WIDTH:
                    wide.append(i)
                    continue
                resized.append((i, resize_to_height(crop, cfg.image_height, PACK_WIDTH)))
            except Exception as exc:
                results[i] = _error(exc)
        if not resized:
            return wide
        placements, n_rows = self._pack(resized, groups)
        by_row: dict[int, list[int]] = {}
        for k, p in enumerate(placements):
            by_row.setdefault(p.row, []).append(k)
        for first in range(0, n_rows, PACK_ROWS):
            batch = np.zeros((PACK_ROWS, 3, cfg.image_height, PACK_WIDTH), np.float32)
            members = []
            for r in range(first, min(first + PACK_ROWS, n_rows)):
                for k in by_row[r]:
                    p = placements[k]
                    batch[r - first, :, :, p.offset:p.offset + p.width] = resized[k][1]
                    members.append((resized[k][0], r - first, p, p.width))
            self._run_batch(batch, members, results)
        return wide

    def _pack(self, resized: list[tuple[int, np.ndarray]],
              groups: Optional[Sequence[int]]) -> tuple[list[Placement], int]:
        """Pack each group's crops into rows of its own; rows are numbered across groups."""
        cfg = self.cfg
        by_group: dict[int, list[int]] = {}
        for k, (i, _) in enumerate(resized):
            by_group.setdefault(groups[i] if groups is not None else 0, []).append(k)
        placements: list[Optional[Placement]] = [None] * len(resized)
        n_rows = 0
        for members in by_group.values():
            placed, rows = pack_rows([resized[k][1].shape[2] for k in members], PACK_WIDTH, PACK_GAP,
                                     CTC_STRIDE)
            for k, p in zip(members, placed):
                placements[k] = Placement(k, p.row + n_rows, p.offset, p.width)
            n_rows += rows
        return [p for p in placements if p is not None], n_rows

    def rows_for(self, bucket: int) -> int:
        """Rows of a batch in this width bucket: fixed (partial batches are padded with blank rows), so
        the predictor only ever sees one shape per bucket and its memory stays bounded."""
        return max(1, BATCH_PIXELS // bucket)

    def _finish(self, probs: np.ndarray, used_width: int, check: Optional[np.ndarray] = None) -> Recognized:
        # frames past the image content (right padding) carry only blanks; drop them
        n_frames = min(probs.shape[0], int(np.ceil(used_width / CTC_STRIDE)) + 1)
        probs = probs[:n_frames]
        res = self.decode(probs)
        text = self.chars.decode(res.labels)
        score = float(np.mean(res.char_probs)) if res.char_probs else 0.0
        return Recognized(
            text=text, score=score, char_probs=tuple(float(p) for p in res.char_probs),
            char_frames=tuple(int(f) for f in res.char_frames), num_frames=n_frames,
            frame_probs=keep_columns(probs, KEEP_MIN_PROB, KEEP_MAX_COLUMNS, self.always_keep),
            check_text=None if check is None else self.chars.decode(collapse_frames(check[:n_frames])),
        )


def collapse_frames(best: np.ndarray, blank: int = 0) -> list[int]:
    """The greedy CTC labels of per-frame best classes: repeats collapsed, blanks dropped."""
    best = np.asarray(best)
    keep = np.ones(best.shape[0], bool)
    keep[1:] = best[1:] != best[:-1]
    return [int(c) for c in best[keep] if c != blank]
