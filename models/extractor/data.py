"""Labelled pages (synthetic ground truth or OCR'd and aligned) -> training windows (numpy only).

A document is one JSON file (next to its image) with at least::

    {"width": W, "height": H,
     "lines": [{"text": str, "polygon": [[x, y] x 4],
                "labels": ["O" | "B-key" | "I-key" per char],
                "char_boxes": [[x0, y0, x1, y1] per char]}]}

``char_boxes`` may be missing (boxes are then cut from the polygon); ``split`` is optional.
Lines are read in the given order: ground-truth layout order or OCR reading order alike.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

import numpy as np

from stages.extraction.ernie_features import (
    IGNORE_LABEL, LABEL_TO_ID, LABELS, FeatureSpec, Vocab, char_boxes_from_polygon, featurize_page,
    split_label, window_labels,
)

log = logging.getLogger(__name__)


@dataclass
class TrainingDoc:
    """One labelled page. Boxes are page pixels; label ids index :data:`labels.LABELS`."""

    name: str
    width: float
    height: float
    texts: list[str]
    boxes: list[np.ndarray]  # per line (n_chars, 4) float32
    labels: list[np.ndarray]  # per line (n_chars,) int64
    split: Optional[str] = None
    layout: Optional[str] = None

    @property
    def n_chars(self) -> int:
        return sum(len(t) for t in self.texts)


def parse_doc(raw: dict, name: str = "") -> TrainingDoc:
    texts: list[str] = []
    boxes: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    for li, line in enumerate(raw["lines"]):
        text = str(line.get("text", ""))
        n = len(text)
        cb = line.get("char_boxes")
        if cb is not None and len(cb) == n:
            b = np.asarray(cb, dtype=np.float32).reshape(n, 4)
        else:
            b = char_boxes_from_polygon(np.asarray(line["polygon"], dtype=np.float32), n)
        lab = line.get("labels")
        if lab is None:
            ids = np.zeros((n,), dtype=np.int64)
        else:
            if len(lab) != n:
                raise ValueError(f"{name}: line {li} has {n} characters but {len(lab)} labels")
            ids = np.asarray([LABEL_TO_ID[x] for x in lab], dtype=np.int64)
        texts.append(text)
        boxes.append(b)
        labels.append(ids)
    return TrainingDoc(
        name, float(raw["width"]), float(raw["height"]), texts, boxes, labels, raw.get("split"), raw.get("layout")
    )


def is_doc_json(raw: object) -> bool:
    return isinstance(raw, dict) and "lines" in raw and "width" in raw and "height" in raw


def load_docs(root: str | Path, split: Optional[str] = None, limit: Optional[int] = None) -> list[TrainingDoc]:
    """Every document JSON under ``root`` (recursively, sorted); other JSON files are skipped.
    ``split`` keeps only documents whose ``split`` field equals it (documents without one are kept)."""
    docs: list[TrainingDoc] = []
    for path in sorted(Path(root).rglob("*.json")):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("skipping %s: %s", path, exc)
            continue
        if not is_doc_json(raw):
            continue
        doc = parse_doc(raw, name=str(path))
        if split is not None and doc.split not in (None, split):
            continue
        docs.append(doc)
        if limit is not None and len(docs) >= limit:
            break
    return docs


# ---------------------------------------------------------------------------------------------- noise


@dataclass(frozen=True)
class NoiseConfig:
    """OCR-like corruption applied to training pages (labels follow the characters)."""

    substitute: float = 0.03  # per character: replaced by a random dictionary character
    delete: float = 0.005  # per character: dropped
    insert_space: float = 0.01  # per character: a space inserted before it
    line_shift: float = 0.004  # per line: x/y offset, as a fraction of the page side (std)
    char_jitter: float = 0.0015  # per character box edge, fraction of the page side (std)
    page_scale: float = 0.03  # whole page: zoom std around 1 (margins, scan scale)
    swap_lines: float = 0.03  # per line: swapped with the next one when they share a row

    @classmethod
    def none(cls) -> "NoiseConfig":
        return cls(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def scaled(self, factor: float) -> "NoiseConfig":
        """Every rate times ``factor`` (the curriculum ramps noise in from clean pages)."""
        f = min(max(factor, 0.0), 1.0)
        return NoiseConfig(*(getattr(self, k) * f for k in self.__dataclass_fields__))


def _space_label(left: int, right: int, labels: Sequence[str]) -> int:
    """Label of a space inserted between tokens labelled ``left`` and ``right``: inside a field when both
    neighbours are in it, ``O`` otherwise."""
    if left <= 0 or right <= 0:
        return 0
    _, lk = split_label(labels[left])
    rp, rk = split_label(labels[right])
    if lk == rk and rp == "I":
        return LABEL_TO_ID[f"I-{lk}"]
    return 0


def add_noise(doc: TrainingDoc, rng: np.random.Generator, charset: Sequence[str], cfg: NoiseConfig) -> TrainingDoc:
    """A corrupted copy of ``doc``."""
    w, h = doc.width, doc.height
    scale = float(np.clip(1.0 + rng.normal(0.0, cfg.page_scale), 0.85, 1.15)) if cfg.page_scale else 1.0
    cx, cy = w / 2, h / 2
    order = list(range(len(doc.texts)))
    if cfg.swap_lines:
        for i in range(len(order) - 1):
            a, b = doc.boxes[order[i]], doc.boxes[order[i + 1]]
            if len(a) and len(b) and rng.random() < cfg.swap_lines:
                ya, yb = (a[:, 1].min() + a[:, 3].max()) / 2, (b[:, 1].min() + b[:, 3].max()) / 2
                if abs(ya - yb) < 0.5 * (a[:, 3].max() - a[:, 1].min()):
                    order[i], order[i + 1] = order[i + 1], order[i]
    texts: list[str] = []
    boxes: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    for li in order:
        text, box, lab = doc.texts[li], doc.boxes[li].astype(np.float64), doc.labels[li]
        n = len(text)
        if n == 0:
            continue
        box = box.copy()
        box[:, [0, 2]] = (box[:, [0, 2]] - cx) * scale + cx + rng.normal(0.0, cfg.line_shift * w)
        box[:, [1, 3]] = (box[:, [1, 3]] - cy) * scale + cy + rng.normal(0.0, cfg.line_shift * h)
        if cfg.char_jitter:
            box += rng.normal(0.0, cfg.char_jitter, box.shape) * np.array([w, h, w, h])
        chars = list(text)
        lab_l = [int(x) for x in lab]
        box_l = list(box)
        sub = rng.random(n) < cfg.substitute
        for i in np.flatnonzero(sub):
            chars[i] = charset[int(rng.integers(len(charset)))]
        out_c: list[str] = []
        out_l: list[int] = []
        out_b: list[np.ndarray] = []
        for i in range(n):
            if rng.random() < cfg.delete and n > 1:
                continue
            if out_c and rng.random() < cfg.insert_space:
                prev_b = out_b[-1]
                out_c.append(" ")
                out_l.append(_space_label(out_l[-1], lab_l[i], LABELS))
                out_b.append(np.array([prev_b[2], prev_b[1], box_l[i][0], prev_b[3]]))
            out_c.append(chars[i])
            out_l.append(lab_l[i])
            out_b.append(box_l[i])
        if not out_c:
            continue  # every character deleted
        # a deleted B- leaves the span starting with I-: make it a B- again
        for i, lid in enumerate(out_l):
            prefix, key = split_label(LABELS[lid])
            if prefix == "I" and (i == 0 or split_label(LABELS[out_l[i - 1]])[1] != key):
                if i == 0 and labels and split_label(LABELS[int(labels[-1][-1])])[1] == key:
                    continue  # the span continues from the previous line
                out_l[i] = LABEL_TO_ID[f"B-{key}"]
        b = np.asarray(out_b, dtype=np.float64)
        b[:, 2] = np.maximum(b[:, 2], b[:, 0] + 1)
        b[:, 3] = np.maximum(b[:, 3], b[:, 1] + 1)
        texts.append("".join(out_c))
        boxes.append(b.astype(np.float32))
        labels.append(np.asarray(out_l, dtype=np.int64))
    return TrainingDoc(doc.name, w, h, texts, boxes, labels, doc.split, doc.layout)


# -------------------------------------------------------------------------------------------- windows


@dataclass
class Example:
    """Windows of one page plus what is needed to map them back to characters."""

    input_ids: np.ndarray  # (W, L)
    bbox: np.ndarray  # (W, L, 4)
    attention_mask: np.ndarray  # (W, L)
    labels: np.ndarray  # (W, L), IGNORE_LABEL outside characters
    spans: tuple[tuple[int, int], ...]
    token_labels: np.ndarray  # (N,) per page token, IGNORE_LABEL for separators
    is_char: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, bool))


def featurize(doc: TrainingDoc, vocab: Vocab, max_len: int, stride: int, spec: FeatureSpec) -> Example:
    """The runtime's featurisation (:mod:`stages.extraction.ernie_features`) plus the gold labels."""
    toks, win = featurize_page(doc.texts, doc.boxes, doc.width, doc.height, vocab, spec, max_len, stride)
    tok_labels = np.full((len(toks),), IGNORE_LABEL, dtype=np.int64)
    non_empty = [lab for t, lab in zip(doc.texts, doc.labels) if t]
    if non_empty:
        tok_labels[toks.is_char] = np.concatenate(non_empty)
    return Example(
        win.input_ids, win.bbox, win.attention_mask, window_labels(tok_labels, win.spans, max_len),
        win.spans, tok_labels, toks.is_char,
    )


@dataclass(frozen=True)
class Batch:
    input_ids: np.ndarray
    bbox: np.ndarray
    attention_mask: np.ndarray
    labels: np.ndarray


def collate(rows: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]], multiple: int = 32) -> Batch:
    """Stack windows, trimmed to the longest one in the batch (rounded up to ``multiple``)."""
    longest = max(int(r[2].sum()) for r in rows)
    length = min(rows[0][0].shape[0], -(-longest // multiple) * multiple)
    return Batch(
        np.stack([r[0][:length] for r in rows]),
        np.stack([r[1][:length] for r in rows]),
        np.stack([r[2][:length] for r in rows]),
        np.stack([r[3][:length] for r in rows]),
    )


@dataclass(frozen=True)
class Curriculum:
    """From clean ground truth to OCR: for ``clean_steps`` steps pages are the generator's text and boxes
    as drawn; then OCR-like noise ramps in linearly over ``ramp_steps``; OCR-aligned pages (when given)
    replace a growing share of the ground-truth pages over the same ramp, up to ``ocr_share``."""

    clean_steps: int = 0
    ramp_steps: int = 0
    ocr_share: float = 0.0

    def level(self, step: int) -> float:
        if step < self.clean_steps:
            return 0.0
        if self.ramp_steps <= 0:
            return 1.0
        return min(1.0, (step - self.clean_steps + 1) / self.ramp_steps)


def batch_stream(
    docs: Sequence[TrainingDoc],
    vocab: Vocab,
    max_len: int,
    stride: int,
    spec: FeatureSpec,
    batch_size: int,
    rng: np.random.Generator,
    noise: NoiseConfig,
    curriculum: Curriculum = Curriculum(),
    step: Callable[[], int] = lambda: 0,
    ocr_docs: Sequence[TrainingDoc] = (),
) -> Iterator[Batch]:
    """Endless batches: documents shuffled each pass, corrupted afresh at the curriculum level of the
    current ``step()``, cut into windows; windows shuffled in a pool."""
    if not docs:
        raise ValueError("no training documents")
    charset = [vocab.tokens[i] for i in vocab.char_ids if vocab.tokens[i].strip()]
    pool: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    pool_size = batch_size * 16
    while True:
        for di in rng.permutation(len(docs)):
            level = curriculum.level(step())
            doc = docs[di]
            if ocr_docs and rng.random() < curriculum.ocr_share * level:
                doc = ocr_docs[int(rng.integers(len(ocr_docs)))]
            elif level > 0:
                doc = add_noise(doc, rng, charset, noise.scaled(level))
            ex = featurize(doc, vocab, max_len, stride, spec)
            for w in range(ex.input_ids.shape[0]):
                pool.append((ex.input_ids[w], ex.bbox[w], ex.attention_mask[w], ex.labels[w]))
            while len(pool) >= pool_size:
                idx = rng.permutation(len(pool))
                chosen = [pool[i] for i in idx[:batch_size]]
                pool = [pool[i] for i in idx[batch_size:]]
                yield collate(chosen)
