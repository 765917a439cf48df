"""ERNIE-Layout as evidence for the learned decision: one extractor run over a document's pages, its decoded
spans as candidates (source ``ernie``) and its per-character field probabilities as features of every candidate.
A page the extractor failed on (or a document run without it) has no ERNIE candidates and NaN ERNIE features."""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from stages.contracts.fields import FIELD_KEYS
from stages.contracts.types import StageError, TextLine
from stages.extraction.field_specs import FIELDS, normalize_field
from stages.extraction.learned.candidates import Candidate, CharRef, DocLines
from stages.extraction.learned.detectors import PRODUCT_RE, fold

if TYPE_CHECKING:
    from stages.extraction.ernie import ErnieExtractor, Extraction

log = logging.getLogger(__name__)

SOURCE = "ernie"
# mean and min of P(field's B or I tag) over the candidate's characters; whether the candidate's characters /
# value are ERNIE's best valid span of the field; the probability of that best span (0: ERNIE found none); the
# highest mean probability of another field's tags over the candidate's characters
ERNIE_FEATURES = ("ernie_mean", "ernie_min", "ernie_best_span", "ernie_best_value", "ernie_field_best",
                  "ernie_other")


def run_extractor(extractor: "ErnieExtractor", lines: Sequence[Sequence[TextLine]],
                  page_sizes: Sequence[tuple[float, float]]) -> tuple[Optional["Extraction"], ...]:
    """One :meth:`~stages.extraction.ernie.ErnieExtractor.extract_batch` over the document's pages with lines;
    per page the :class:`~stages.extraction.ernie.Extraction`, or None (no lines, or the extractor failed)."""
    from stages.extraction.ernie import ExtractorPage

    out: list[Optional["Extraction"]] = [None] * len(lines)
    todo = [pi for pi, page_lines in enumerate(lines) if page_lines]
    if not todo:
        return tuple(out)
    pages = [ExtractorPage.from_text_lines(lines[pi], *page_sizes[pi]) for pi in todo]
    try:
        results = extractor.extract_batch(pages)
    except Exception as exc:  # the decision runs without ERNIE's evidence
        log.warning("ERNIE-Layout failed on the document (%s: %s); deciding without it", type(exc).__name__, exc)
        return tuple(out)
    for pi, res in zip(todo, results):
        if isinstance(res, StageError):
            log.warning("ERNIE-Layout failed on page %d (%s: %s); deciding without it", pi, res.type, res.message)
        else:
            out[pi] = res
    return tuple(out)


_TOKEN_KINDS = ("code", "id_number", "phone", "amount")  # values that are one token of letters and digits


def _alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _in_token(text: str, i: int, kind: str) -> bool:
    """Whether ``text[i]`` belongs to a token of letters and digits: an amount's separator between two digits does
    too, and a hyphen between two of a code's or a number's characters (E685-1957-203122-22, 139-1234-5678)."""
    if not 0 <= i < len(text):
        return False
    ch = fold(text[i])
    if _alnum(ch):
        return True
    inner = 0 < i < len(text) - 1
    if kind == "amount":
        return ch in ".," and inner and fold(text[i - 1]).isdigit() and fold(text[i + 1]).isdigit()
    return ch == "-" and inner and _alnum(fold(text[i - 1])) and _alnum(fold(text[i + 1]))


def whole_token(key: str, text: str, chars: tuple[tuple[int, int], ...], texts: Sequence[str],
                today: date) -> tuple[str, tuple[tuple[int, int], ...]]:
    """ERNIE-Layout's span of a code, ID number, phone or amount widened to the whole token it cuts on its line, where
    it is the token's start (￥3 of ￥3，000，000.00: the decoder stopped at a separator) or most of it
    (2018883616 of 448188222018883616); the span itself where it cuts none, is a short piece inside the token,
    spans lines, or the widened text does not normalize."""
    kind = FIELDS[key].kind
    if kind not in _TOKEN_KINDS or not chars or len({li for li, _ in chars}) != 1:
        return text, chars
    li = chars[0][0]
    line = texts[li]
    start, end = min(ci for _, ci in chars), max(ci for _, ci in chars) + 1
    s, e = start, end
    while _in_token(line, s - 1, kind) and _in_token(line, s, kind):
        s -= 1
    while _in_token(line, e, kind) and _in_token(line, e - 1, kind):
        e += 1
    if (s, e) == (start, end) or (start > s and 2 * (end - start) < e - s):
        return text, chars  # a short piece inside the token (5 of 06252056) is no reading of it
    if normalize_field(key, line[s:e], today).value is None:
        return text, chars
    return line[s:e], tuple((li, ci) for ci in range(s, e))


def whole_product(key: str, text: str, chars: tuple[tuple[int, int], ...], texts: Sequence[str]
                  ) -> tuple[str, tuple[tuple[int, int], ...]]:
    """ERNIE-Layout's span of a product name that is no product by itself (it does not end as one:
    ``detectors.PRODUCT_RE``, …险 or …计划 with its qualifiers) widened to the product its line prints around it,
    where the span lies inside that match on one line (康定期 of 福寿安康定期寿险: the decoder tagged a piece of it);
    the span itself otherwise. A whole product stays as read: the match may hold a label read glued to it
    (险种无忧重大疾病保险)."""
    if (key != "product_name" or not chars or len({li for li, _ in chars}) != 1
            or PRODUCT_RE.fullmatch(fold(text).strip())):
        return text, chars
    li = chars[0][0]
    line = texts[li]
    start, end = min(ci for _, ci in chars), max(ci for _, ci in chars) + 1
    for m in PRODUCT_RE.finditer(fold(line)):
        if m.start() <= start and end <= m.end() and (m.start(), m.end()) != (start, end):
            return line[m.start():m.end()], tuple((li, ci) for ci in range(m.start(), m.end()))
    return text, chars


@dataclass(frozen=True)
class _Best:
    chars: tuple[CharRef, ...]
    value: Optional[str]
    prob: float


class ErnieEvidence:
    """ERNIE's reading of one document (per page an ``Extraction`` or None): its candidates, its features."""

    def __init__(self, doc: DocLines, extractions: Sequence[Optional["Extraction"]], today: date):
        self.doc = doc
        self.pages = tuple(extractions)
        self.field_probs: dict[int, list[np.ndarray]] = {}  # page -> per line (n_chars, len(FIELD_KEYS))
        self.candidates: list[Candidate] = []
        self.best: dict[str, _Best] = {}
        page_lines: dict[int, list[TextLine]] = {}
        for p, _, ln in doc.flat:
            page_lines.setdefault(p, []).append(ln)
        for p, ex in enumerate(self.pages):
            if ex is None:
                continue
            labels = list(ex.labels)
            cols_b = [labels.index(f"B-{k}") if f"B-{k}" in labels else None for k in FIELD_KEYS]
            cols_i = [labels.index(f"I-{k}") if f"I-{k}" in labels else None for k in FIELD_KEYS]
            per_line = []
            for probs in ex.char_probs:
                probs = np.asarray(probs, np.float32).reshape(-1, len(labels))
                fp = np.zeros((probs.shape[0], len(FIELD_KEYS)), np.float32)
                for j, (b, i) in enumerate(zip(cols_b, cols_i)):
                    if b is not None:
                        fp[:, j] += probs[:, b]
                    if i is not None:
                        fp[:, j] += probs[:, i]
                per_line.append(fp)
            self.field_probs[p] = per_line
            texts = [ln.text for ln in page_lines.get(p, [])]
            try:
                spans = ex.valid_fields(texts, today)
            except ValueError as exc:  # probabilities out of step with the lines: no evidence from this page
                log.warning("ERNIE-Layout output does not match page %d (%s)", p, exc)
                del self.field_probs[p]
                continue
            for key, span in spans.items():
                if key not in FIELDS:
                    continue
                text, kept = whole_token(key, span.text, span.chars, texts, today)
                text, kept = whole_product(key, text, kept, texts)
                chars = tuple((p, li, ci) for li, ci in kept if not texts[li][ci].isspace())
                if not chars:
                    continue
                n = normalize_field(key, text, today)
                self.candidates.append(Candidate(key, text, chars, n.value, tuple(n.issues), SOURCE, SOURCE))
                cur = self.best.get(key)
                if cur is None or span.prob > cur.prob:
                    self.best[key] = _Best(chars, n.value, float(span.prob))

    @staticmethod
    def missing(doc: DocLines) -> "ErnieEvidence":
        """No ERNIE evidence for the document (the extractor did not run, or its evidence is withheld)."""
        return ErnieEvidence(doc, [None] * len(doc.page_sizes), date(2000, 1, 1))

    def features(self, c: Candidate) -> list[float]:
        """:data:`ERNIE_FEATURES` of one candidate (NaN where a page of its characters has no ERNIE reading)."""
        rows = []
        for p, li, ci in c.chars:
            lines = self.field_probs.get(p)
            if lines is None or li >= len(lines) or ci >= lines[li].shape[0]:
                return [math.nan] * len(ERNIE_FEATURES)
            rows.append(lines[li][ci])
        fp = np.stack(rows)
        j = FIELD_KEYS.index(c.key)
        mean = fp.mean(axis=0)
        best = self.best.get(c.key)
        other = float(np.max(np.delete(mean, j))) if len(FIELD_KEYS) > 1 else 0.0
        return [float(mean[j]), float(fp[:, j].min()),
                float(best is not None and best.chars == c.chars),
                float(best is not None and c.value is not None and best.value == c.value),
                best.prob if best is not None else 0.0, other]
