"""Training and measurement documents for the scorer: OCR caches (models/scorer/ocr_cache.py) and synthetic pages
read from their ground-truth lines (exact text, every character probability 1), with each candidate labelled by
whether its normalized value equals the truth for its field; ERNIE-Layout's evidence is computed by the runtime's
function."""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from models.scorer.ocr_cache import CachedDocument, load_folder
from stages.contracts.fields import FIELD_KEYS
from stages.contracts.types import TextLine
from stages.extraction.learned.ernie_evidence import run_extractor
from stages.extraction.learned.extract import DocumentCandidates, document_candidates
from stages.extraction.rules.lexicon import FULL_LEXICON, ROLE_WORDS, withheld_lexicon
from stages.recognition.ctc import CharDict


@dataclass(frozen=True)
class Document:
    name: str
    lines: list[list[TextLine]]
    page_sizes: list[tuple[float, float]]
    truth: dict  # field -> normalized value (None when absent)


def _char_u(polygon: np.ndarray, boxes: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """Character centres as fractions along the line's top edge."""
    p0, p1 = polygon[0], polygon[1]
    d = p1 - p0
    length2 = float(d @ d) or 1.0
    return tuple(float(np.clip(((np.array([(b[0] + b[2]) / 2, (b[1] + b[3]) / 2]) - p0) @ d) / length2, 0, 1))
                 for b in boxes)


def truth_document(path: Path) -> Optional[Document]:
    """A single-page synthetic page read from its ground-truth lines (None for multi-page documents)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("image_format") == "pdf" or "lines" not in data:
        return None
    lines = []
    for r in data["lines"]:
        poly = np.asarray(r["polygon"], np.float32)
        text = r["text"]
        boxes = r.get("char_boxes") or []
        lines.append(TextLine(text, 1.0, poly, (1.0,) * len(text),
                              _char_u(poly, boxes) if len(boxes) == len(text) else ()))
    return Document(f"{path.parent.name}/{path.name}", [lines], [(float(data["width"]), float(data["height"]))], data["fields"])


def cached_document(doc: CachedDocument, folder: str) -> Document:
    """An OCR-cached page, named like a ground-truth one (``folder/name``): caches of several generator runs hold
    the same file names, and a document's name keys its withheld wordings and its id in ``rows.npz``."""
    sizes = [(float(p.width), float(p.height)) for p in doc.pages]
    return Document(f"{folder}/{doc.name}", doc.lines, sizes, doc.truth["fields"])


def load_documents(truth_dirs: Sequence[Path] = (), ocr_dirs: Sequence[Path] = ()) -> list[Document]:
    """The documents of every folder, in order; a folder that is missing or holds none is an error (a mistyped
    path must not train a smaller model in silence)."""
    docs: list[Document] = []
    for folder in truth_dirs:
        got = [d for p in sorted(Path(folder).glob("*.json")) if (d := truth_document(p)) is not None]
        docs += _nonempty(got, folder, "ground-truth")
    for folder in ocr_dirs:
        got = [cached_document(d, Path(folder).name) for d in load_folder(Path(folder))]
        docs += _nonempty(got, folder, "OCR cache")
    return docs


def _nonempty(docs: list[Document], folder: Path, what: str) -> list[Document]:
    if not docs:
        raise ValueError(f"{folder}: no {what} documents (missing or empty folder)")
    return docs


def withheld_fraction(rng: random.Random, share: float, low: float, high: float) -> float:
    """Per training document: no wordings withheld, or (with probability ``share``) a fraction in [low, high]."""
    return rng.uniform(low, high) if rng.random() < share else 0.0


_ROLE_CHARS = set("".join(ROLE_WORDS))


def novel_pool(docs: Sequence[Document]) -> str:
    """The characters novel wordings are drawn from: every CJK character printed on the documents (names,
    addresses, companies, labels) except those of the role words, in a fixed order."""
    chars = {ch for d in docs for page in d.lines for ln in page for ch in ln.text if "\u4e00" <= ch <= "\u9fff"}
    return "".join(sorted(chars - _ROLE_CHARS))


_ROLE_LEADS = tuple(sorted((w for w, r in ROLE_WORDS.items() if r != "other"), key=len, reverse=True))
_ROLE_MATCH = re.compile("|".join(_ROLE_LEADS))
KEPT_SUFFIXES = ("日期", "时间", "金额", "名称", "号码", "编号")


def _names_field(text: str) -> bool:
    """Whether a field or period label of the full lexicon occurs in ``text``."""
    return any((d := FULL_LEXICON.labels.get(m.group())) is not None and d.kind in ("field", "period")
               for m in FULL_LEXICON.pattern.finditer(text))


def stem_split(label: str) -> Optional[tuple[str, str, bool]]:
    """(stem, kept tail, whether the stem is a role word) of a field label whose role word or head a new wording
    may replace while its attribute stays: 被保险人证件号码 -> (被保险人, 证件号码, True), 合同生效日期 -> (合同生效,
    日期, False); None for a label with two role words or neither a role word nor a kept suffix (保费)."""
    roles = _ROLE_MATCH.findall(label)
    if roles:
        return (roles[0], label[len(roles[0]):], True) if len(roles) == 1 and label.startswith(roles[0]) else None
    tail = next((s for s in KEPT_SUFFIXES if label.endswith(s) and len(label) > len(s)), None)
    return (label[:-len(tail)], tail, False) if tail else None


def novel_wordings(doc: Document, rng: random.Random, keys: Sequence[str], pool: str, stem: bool = False) -> Document:
    """The document with every printed label of the fields ``keys`` (the lexicon's field and period labels that
    name one of them) replaced by a string of the same length drawn from ``pool``, one string per label text,
    that no lexicon label occurs in: a wording nobody listed, as on an insurer's new forms. Characters keep their
    places and recognition probabilities, so the page's geometry and OCR evidence stay as they were.

    With ``stem`` only the label's role word or head is new and its attribute stays (:func:`stem_split`), as new
    wordings usually are (保障对象 and 保障对象证件号 for the insured, 应缴金额 for the premium): one new string per
    role word on the document, so a role's labels keep sharing it; labels with no such split are new whole."""
    novel: dict[str, str] = {}

    def fresh(length: int, tail: str = "") -> Optional[str]:
        for _ in range(50):
            text = "".join(rng.choice(pool) for _ in range(length))
            if FULL_LEXICON.pattern.search(text) is None and not _names_field(text + tail):
                return text
        return None

    def draw(label: str) -> str:
        if label in novel:
            return novel[label]
        split = stem_split(label) if stem else None
        if split is not None:
            head, tail, role = split
            key = "role:" + head if role else "head:" + label
            if key not in novel and (text := fresh(len(head), tail)) is not None:
                novel[key] = text
            if key in novel and not _names_field(novel[key] + tail):
                novel[label] = novel[key] + tail
                return novel[label]
        while label not in novel:
            text = "".join(rng.choice(pool) for _ in label)
            if FULL_LEXICON.pattern.search(text) is None:
                novel[label] = text
        return novel[label]

    def rewrite(ln: TextLine) -> TextLine:
        parts, end = [], 0
        for m in FULL_LEXICON.pattern.finditer(ln.text):
            d = FULL_LEXICON.labels.get(m.group())
            if d is not None and d.kind in ("field", "period") and set(d.fields) & set(keys):
                parts += [ln.text[end:m.start()], draw(m.group())]
                end = m.end()
        return replace(ln, text="".join(parts) + ln.text[end:]) if parts else ln

    return replace(doc, lines=[[rewrite(ln) for ln in page] for page in doc.lines])


def document_rows(doc: Document, today: date, withhold: float = 0.0, seed: int = 0,
                  chars: Optional[CharDict] = None, extractor: Any = None) -> tuple[DocumentCandidates, np.ndarray]:
    """The document's candidates and features (lexicon less ``withhold`` of its wordings) and their 0/1 labels;
    with ``extractor`` (an :class:`~stages.extraction.ernie.ErnieExtractor`) ERNIE-Layout's evidence is in them,
    run as at runtime (:func:`~stages.extraction.learned.ernie_evidence.run_extractor`)."""
    lexicon = withheld_lexicon(withhold, seed, doc.name) if withhold else FULL_LEXICON
    ernie = run_extractor(extractor, doc.lines, doc.page_sizes) if extractor is not None else None
    dc = document_candidates(doc.lines, doc.page_sizes, today, lexicon, chars, ernie)
    y = np.array([float(c.value is not None and c.value == doc.truth.get(c.key)) for c in dc.candidates], np.float32)
    return dc, y


def training_rows(docs: Sequence[Document], today: date, seed: int, share: float, low: float, high: float,
                  chars: Optional[CharDict] = None, extractor: Any = None, ernie_drop: float = 0.0,
                  novel: float = 0.0, novel_fields: int = 3, novel_stem: float = 0.0
                  ) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(document name, features, labels) per document, the withheld fraction drawn per document from ``seed``;
    on a random ``ernie_drop`` of the documents ERNIE-Layout's evidence is left out (as where it fails at runtime),
    and on a random ``novel`` share of them the labels of 1 to ``novel_fields`` fields are printed in novel
    wordings (:func:`novel_wordings`), each drawn from a generator of its own so that the withheld fractions stay
    those of ``seed``; on a ``novel_stem`` share of those only the labels' role words or heads are new."""
    rng = random.Random(seed)
    drops = random.Random(f"ernie-drop:{seed}")
    novels = random.Random(f"novel:{seed}")
    stems = random.Random(f"novel-stem:{seed}")
    pool = novel_pool(docs) if novel else ""
    for doc in docs:
        frac = withheld_fraction(rng, share, low, high)
        dropped = drops.random() < ernie_drop
        if novels.random() < novel:
            keys = novels.sample(FIELD_KEYS, novels.randint(1, novel_fields))
            doc = novel_wordings(doc, novels, keys, pool, stem=novel_stem > 0 and stems.random() < novel_stem)
        dc, y = document_rows(doc, today, frac, seed, chars, None if dropped else extractor)
        yield doc.name, dc.features, y
