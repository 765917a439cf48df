"""ERNIE-Layout field extraction at runtime: lines with character boxes -> per-character label
probabilities -> BIO spans per field.

Runs the exported program (``models/weights/extractor``: ``inference.json`` + ``.pdiparams`` +
``vocab.txt`` + ``extractor.yaml``) in ``paddle.inference``. Featurisation and windowing are
:mod:`stages.extraction.ernie_features`, which training imports too, in the format the weights record
(``features:``); PaddleNLP is never imported here.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import yaml

from stages.extraction.ernie_features import (
    LABELS, FeatureSpec, Vocab, Windows, char_boxes_from_polygon, decode_bio, featurize_page, merge_windows,
    quads_to_boxes,
)
from stages.extraction.ernie_decode import decode_fields
from stages.contracts.registry import resolve_model
from stages.contracts.config import PredictorConfig
from stages.contracts.types import StageError, TextLine

MODEL_KEY = "docpipe_extractor"
CONFIG_NAME = "extractor.yaml"
LENGTH_MULTIPLE = 128  # window batches are padded to a multiple of this (few shapes for oneDNN's cache)


@dataclass(frozen=True)
class ExtractorLine:
    """A text line as the extractor sees it: its text and one page-pixel box ``[x0, y0, x1, y1]`` per character."""

    text: str
    char_boxes: np.ndarray  # (len(text), 4)

    @classmethod
    def from_text_line(cls, line: TextLine) -> "ExtractorLine":
        """Boxes around the recognizer's per-character quadrilaterals; without character positions the
        polygon is cut into equal parts."""
        if line.text and len(line.char_u) == len(line.text):
            boxes = quads_to_boxes(line.char_boxes())
        else:
            boxes = char_boxes_from_polygon(line.polygon, len(line.text))
        return cls(line.text, boxes)


@dataclass(frozen=True)
class ExtractorPage:
    lines: Sequence[ExtractorLine]
    width: float
    height: float

    @classmethod
    def from_text_lines(cls, lines: Sequence[TextLine], width: float, height: float) -> "ExtractorPage":
        """The extractor's input for one page of OCR lines."""
        return cls([ExtractorLine.from_text_line(ln) for ln in lines], float(width), float(height))


@dataclass(frozen=True)
class FieldSpan:
    """A predicted field occurrence: its characters as ``(line index, char index)`` in reading order."""

    field: str
    text: str
    chars: tuple[tuple[int, int], ...]
    prob: float  # mean probability of the predicted tags over the span


@dataclass(frozen=True)
class Extraction:
    """What the extractor read from one page."""

    labels: tuple[str, ...]
    char_probs: tuple[np.ndarray, ...]  # per line: (n_chars, len(labels)) float32
    spans: tuple[FieldSpan, ...]

    def valid_fields(self, texts: Sequence[str], today: date) -> dict[str, FieldSpan]:
        """Per field, the most probable span whose value passes the field's validators
        (:func:`stages.extraction.ernie_decode.decode_fields`); ``texts`` are the page's line texts."""
        pos = [(li, ci) for li, t in enumerate(texts) for ci in range(len(t))]
        flat = "".join(texts)
        if not pos:
            return {}
        probs = np.concatenate([p for p in self.char_probs if len(p)]) if any(len(p) for p in self.char_probs) else None
        if probs is None or probs.shape[0] != len(flat):
            raise ValueError("character probabilities do not match the line texts")
        out = {}
        for key, d in decode_fields(flat, probs, self.labels, today).items():
            out[key] = FieldSpan(key, d.text, tuple(pos[d.start : d.end]), d.prob)
        return out

    def best(self) -> dict[str, FieldSpan]:
        """The most probable span of each field found."""
        out: dict[str, FieldSpan] = {}
        for s in self.spans:
            cur = out.get(s.field)
            if cur is None or (s.prob, len(s.chars)) > (cur.prob, len(cur.chars)):
                out[s.field] = s
        return out


def spans_from_tags(
    texts: Sequence[str],
    tags: Sequence[np.ndarray],
    probs: Optional[Sequence[np.ndarray]] = None,
    labels: Sequence[str] = LABELS,
) -> list[FieldSpan]:
    """Decode per-line tag ids (and the probabilities of those tags) into field spans.

    Lines are concatenated in order, so a span may continue onto the next line (``I-`` at a line start).
    Pure: no model needed.
    """
    if len(texts) != len(tags) or (probs is not None and len(probs) != len(tags)):
        raise ValueError("texts, tags and probs differ in length")
    pos = [(li, ci) for li, t in enumerate(texts) for ci in range(len(t))]
    flat_tags = np.concatenate([np.asarray(t, dtype=np.int64) for t in tags]) if tags else np.zeros(0, np.int64)
    if flat_tags.shape[0] != len(pos):
        raise ValueError("tag counts do not match the line texts")
    flat_probs = None
    if probs is not None:
        flat_probs = np.concatenate([np.asarray(p, dtype=np.float64) for p in probs]) if probs else np.zeros(0)
    out = []
    for s in decode_bio(flat_tags, flat_probs, labels):
        chars = tuple(pos[s.start : s.end])
        out.append(FieldSpan(s.field, "".join(texts[li][ci] for li, ci in chars), chars, s.prob))
    return out


def decode_char_probs(
    texts: Sequence[str], char_probs: Sequence[np.ndarray], labels: Sequence[str] = LABELS
) -> list[FieldSpan]:
    """Arg-max tags per character, then :func:`spans_from_tags`."""
    tags = [np.asarray(p).argmax(-1) if len(p) else np.zeros(0, np.int64) for p in char_probs]
    top = [np.asarray(p).max(-1) if len(p) else np.zeros(0) for p in char_probs]
    return spans_from_tags(texts, tags, top, labels)


@dataclass(frozen=True)
class ExtractorMeta:
    labels: tuple[str, ...]
    max_len: int
    stride: int
    features: FeatureSpec
    vocab_file: Path

    @classmethod
    def load(cls, directory: Path) -> "ExtractorMeta":
        raw = yaml.safe_load((directory / CONFIG_NAME).read_text(encoding="utf-8"))
        return cls(
            labels=tuple(raw["labels"]),
            max_len=int(raw["max_len"]),
            stride=int(raw["stride"]),
            features=FeatureSpec.from_meta(raw),
            vocab_file=directory / raw.get("vocab_file", "vocab.txt"),
        )


class ErnieExtractor:
    """Holds one predictor. N pages in -> N :class:`Extraction` (or :class:`StageError`) out, in order.

    Windows of several pages share predictor runs (up to ``max_batch`` windows per run). Not thread-safe:
    one extractor per worker.
    """

    def __init__(
        self,
        predictor_cfg: PredictorConfig = PredictorConfig(),
        model_dir: Optional[Path] = None,
        max_batch: int = 4,
    ) -> None:
        from stages.predictor import PaddlePredictor

        self.model = resolve_model(MODEL_KEY, "extract", model_dir)
        self.meta = ExtractorMeta.load(self.model.directory)
        self.vocab = Vocab.load(self.meta.vocab_file)
        self.runner = PaddlePredictor(self.model, predictor_cfg)
        self.max_batch = max_batch

    # -- featurization -------------------------------------------------------------------------------

    def windows(self, page: ExtractorPage) -> tuple[Windows, np.ndarray, np.ndarray]:
        """Windows of a page plus the page tokens' ``(line, char)`` positions and character mask."""
        toks, win = featurize_page(
            [ln.text for ln in page.lines], [ln.char_boxes for ln in page.lines],
            page.width, page.height, self.vocab, self.meta.features, self.meta.max_len, self.meta.stride,
        )
        return win, toks.char_pos, toks.is_char

    def _run_windows(self, ids: np.ndarray, bbox: np.ndarray, mask: np.ndarray) -> np.ndarray:
        longest = int(mask.sum(axis=1).max())
        length = min(ids.shape[1], -(-longest // LENGTH_MULTIPLE) * LENGTH_MULTIPLE)
        out = np.zeros(ids.shape + (len(self.meta.labels),), dtype=np.float32)
        out[:, :length] = self.runner.run(ids[:, :length], bbox[:, :length], mask[:, :length])[0]
        return out

    # -- batch entry ---------------------------------------------------------------------------------

    def extract_batch(self, pages: Sequence[ExtractorPage]) -> list[Extraction | StageError]:
        results: list[Extraction | StageError] = [StageError("extract", "Internal", "not run")] * len(pages)
        prepared: list[tuple[int, Windows, np.ndarray, np.ndarray]] = []
        for i, page in enumerate(pages):
            try:
                win, pos, is_char = self.windows(page)
                prepared.append((i, win, pos, is_char))
            except Exception as exc:
                results[i] = StageError("extract", type(exc).__name__, str(exc))
        rows = [(k, w) for k, (_, win, _, _) in enumerate(prepared) for w in range(win.input_ids.shape[0])]
        failed: dict[int, StageError] = {}
        per_page: dict[int, list[np.ndarray]] = {k: [] for k in range(len(prepared))}
        for start in range(0, len(rows), self.max_batch):
            chunk = rows[start : start + self.max_batch]
            ids = np.stack([prepared[k][1].input_ids[w] for k, w in chunk])
            bbox = np.stack([prepared[k][1].bbox[w] for k, w in chunk])
            mask = np.stack([prepared[k][1].attention_mask[w] for k, w in chunk])
            try:
                probs = self._run_windows(ids, bbox, mask)
            except Exception as exc:
                for k, _ in chunk:
                    failed[k] = StageError("extract", type(exc).__name__, str(exc))
                continue
            for (k, _), p in zip(chunk, probs):
                per_page[k].append(p)
        for k, (i, win, pos, is_char) in enumerate(prepared):
            if k in failed:
                results[i] = failed[k]
                continue
            try:
                merged = merge_windows(np.stack(per_page[k]), win.spans, len(pos))
                results[i] = self._finish(pages[i], merged, is_char)
            except Exception as exc:
                results[i] = StageError("extract", type(exc).__name__, str(exc))
        return results

    def extract(self, page: ExtractorPage) -> Extraction:
        res = self.extract_batch([page])[0]
        if isinstance(res, StageError):
            raise RuntimeError(f"{res.type}: {res.message}")
        return res

    def _finish(self, page: ExtractorPage, probs: np.ndarray, is_char: np.ndarray) -> Extraction:
        # character tokens come in line order, character order: split them by line length
        texts = [ln.text for ln in page.lines]
        flat = probs[is_char].astype(np.float32, copy=False)
        char_probs = np.split(flat, np.cumsum([len(t) for t in texts])[:-1]) if texts else []
        spans = decode_char_probs(texts, char_probs, self.meta.labels)
        return Extraction(self.meta.labels, tuple(char_probs), tuple(spans))

    def close(self) -> None:
        self.runner = None  # type: ignore[assignment]
