"""One feature vector per candidate, computed by the same function in training and at runtime: who proposed it,
the label-like text next to it (left on its line or row, above it, the head of its row) and how that text matches
each field's wordings, geometry, position, value validity, recognition probabilities, its rivals and ERNIE-Layout's
probabilities over its characters (stages/extraction/learned/ernie_evidence.py), label-like text at the value's own
edges (a label read glued to it), and where a date stands among the document's dates. No field-specific scores: the
field enters only as a categorical feature, and the scorer learns what each piece means."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from stages.contracts.fields import FIELD_KEYS, field_role
from stages.extraction.field_specs import FIELDS
from stages.extraction.label_similarity import best_similarity
from stages.extraction.learned.candidates import Candidate, DocLines
from stages.extraction.learned.detectors import fold
from stages.extraction.learned.ernie_evidence import ERNIE_FEATURES, ErnieEvidence
from stages.extraction.rules.lexicon import DATE_MEANING_WORDS, Lexicon
from stages.extraction.strategies import RULE_STRATEGIES

FEATURE_VERSION = 3

STRATEGIES = RULE_STRATEGIES + ("date", "amount", "id_number", "phone", "company", "product", "code",
              "legal_heirs", "name", "address", "ernie")
_ROLE_RE = re.compile(r"投保|被保|受益|代理|业务员|营销员|经办|客户经理|服务人员|销售人员")
ROLE_OF = {"投保": "policyholder", "被保": "insured", "受益": "beneficiary"}  # a role word's head: its person
_LABEL_RUN = re.compile(r"[\u4e00-\u9fffA-Za-z()/（）]+")
_CONNECTORS = "至到~-—"
_AFTER = {"起": 1.0, "止": 2.0}
_ATTR_OF_KIND = {"name": "name", "beneficiary": "name", "id_number": "id", "phone": "phone"}
LABEL_PLACES = ("left", "above", "row")
_LABEL_FEATURES = ("present", "exact", "exact_other", "distractor", "attr", "sim", "sim_other", "role", "role_other",
                   "meaning", "gap")


def _names() -> tuple[str, ...]:
    names = ["field", "source_rules", "rule_score"] + [f"strategy_{s}" for s in STRATEGIES]
    names += [f"{p}_{f}" for p in LABEL_PLACES for f in _LABEL_FEATURES]
    names += ["left_same_line", "above_dx", "role_before", "prev_connector", "next_marker",
              "x", "y", "w", "page", "pages", "valid", "issues", "text_len", "value_len", "digits",
              "line_score", "char_min", "char_mean",
              "values", "support", "support_sources", "rule_rank", "best_rule_score", "other_fields",
              "order", "value_rank", "magnitude", "line_values"]
    names += list(ERNIE_FEATURES)
    names += ["lead_label", "lead_sim", "tail_label", "tail_sim", "years_after_first", "years_to_next", "years_to_last"]
    return tuple(names)


FEATURE_NAMES: tuple[str, ...] = _names()
CATEGORICAL = ("field",)


@lru_cache(maxsize=65536)
def _similarity(text: str, wordings: tuple[str, ...]) -> float:
    """Similarity of a label-like text to the most similar of a field's wordings (label texts repeat across
    documents, so the result is kept)."""
    return best_similarity(text, wordings)


def _role(text: str) -> Optional[str]:
    """The role the last role word of ``text`` names (``other`` for agents and staff), or None."""
    found = None
    for m in _ROLE_RE.finditer(text):
        found = ROLE_OF.get(m.group(), "other")
    return found


def _field_attr(key: str) -> Optional[str]:
    if key == "policyholder_address":
        return "address"
    return _ATTR_OF_KIND.get(FIELDS[key].kind)


@dataclass(frozen=True)
class _Box:
    x0: float
    y0: float
    x1: float
    y1: float
    h: float = 1.0

    @staticmethod
    def of(x0: float, y0: float, x1: float, y1: float) -> "_Box":
        return _Box(x0, y0, x1, y1, max(1.0, y1 - y0))


def _line_box(poly) -> _Box:
    p = np.asarray(poly, np.float32).reshape(-1, 2)
    return _Box.of(float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max()))


class DocumentFeatures:
    """Per-document state for featurizing its candidates: line boxes, label evidence cached per label text."""

    def __init__(self, doc: DocLines, lexicon: Lexicon):
        self.doc = doc
        self.lexicon = lexicon
        self.boxes = {(p, li): _line_box(ln.polygon) for p, li, ln in doc.flat}
        self.order = {(p, li): i for i, (p, li, _) in enumerate(doc.flat)}
        self.page_lines: dict[int, list[tuple[int, object]]] = {}
        for p, li, ln in doc.flat:
            self.page_lines.setdefault(p, []).append((li, ln))
        self._label_cache: dict[tuple[str, str], list[float]] = {}
        self._sims: dict[str, dict[str, float]] = {}
        self._char_boxes: dict[tuple[int, int], np.ndarray] = {}

    # -- geometry -------------------------------------------------------------------------------------------------
    def char_boxes(self, p: int, li: int) -> np.ndarray:
        if (p, li) not in self._char_boxes:
            self._char_boxes[(p, li)] = self.doc.line((p, li, 0)).char_boxes()
        return self._char_boxes[(p, li)]

    def span_box(self, c: Candidate) -> _Box:
        pts = []
        for p, li, ci in c.chars:
            cb = self.char_boxes(p, li)
            pts.append(cb[ci] if ci < len(cb) else np.asarray(self.doc.line((p, li, 0)).polygon, np.float32))
        a = np.concatenate([np.asarray(x, np.float32).reshape(-1, 2) for x in pts])
        return _Box.of(float(a[:, 0].min()), float(a[:, 1].min()), float(a[:, 0].max()), float(a[:, 1].max()))

    # -- label-like text next to a candidate ----------------------------------------------------------------------
    @staticmethod
    def _tail(text: str) -> str:
        runs = _LABEL_RUN.findall(fold(text))
        return runs[-1][-10:] if runs else ""

    def left_label(self, c: Candidate, box: _Box) -> tuple[str, float, bool]:
        """Label-like text left of the candidate: on its own line, else the nearest box to its left on its row."""
        p, li, c0 = c.chars[0]
        before = self.doc.line((p, li, 0)).text[:c0]
        tail = self._tail(before.rstrip(" :：."))
        if tail and not re.search(r"[\d]", before.rstrip(" :：.")[-1:] or ""):
            return tail, 0.0, True
        best, gap = "", math.inf
        for lj, ln in self.page_lines[p]:
            b = self.boxes[(p, lj)]
            if lj == li or b.x1 > box.x0 + 0.5 * box.h:
                continue
            overlap = min(b.y1, box.y1) - max(b.y0, box.y0)
            if overlap < 0.5 * min(b.h, box.h):
                continue
            g = box.x0 - b.x1
            if g < gap:
                best, gap = self._tail(ln.text.rstrip(" :：.")), g
        return best, (gap / box.h if best else 0.0), False

    def above_label(self, c: Candidate, box: _Box) -> tuple[str, float, float]:
        """The text of the nearest line above whose characters stand over the candidate (a header's cell)."""
        p = c.chars[0][0]
        best, gap, dx = "", math.inf, 0.0
        for lj, ln in self.page_lines[p]:
            b = self.boxes[(p, lj)]
            g = box.y0 - b.y1
            if g < -0.3 * box.h or g > 4 * box.h or g >= gap or b.x1 < box.x0 or b.x0 > box.x1:
                continue
            cb = self.char_boxes(p, lj)
            if len(cb) != len(ln.text):
                text = ln.text
            else:
                cx = cb[:, :, 0].mean(axis=1)
                over = [i for i in range(len(ln.text)) if box.x0 - 0.5 * box.h <= cx[i] <= box.x1 + 0.5 * box.h]
                if not over:
                    continue
                text = ln.text[over[0]: over[-1] + 1]
            tail = self._tail(text)
            if tail:
                best, gap, dx = tail, g, (b.x0 - box.x0)
        return best, (gap / box.h if best else 0.0), dx

    def row_head(self, c: Candidate, box: _Box) -> str:
        """The first box of the candidate's row (a role row's head cell)."""
        p = c.chars[0][0]
        head, x = "", math.inf
        for lj, ln in self.page_lines[p]:
            b = self.boxes[(p, lj)]
            overlap = min(b.y1, box.y1) - max(b.y0, box.y0)
            if overlap >= 0.5 * min(b.h, box.h) and b.x0 < x:
                head, x = ln.text, b.x0
        return self._tail(head[:12]) if head else ""

    def role_before(self, c: Candidate) -> Optional[str]:
        """The role named last before the candidate on its page, in reading order."""
        p, li, c0 = c.chars[0]
        role = _role(self.doc.line((p, li, 0)).text[:c0])
        if role:
            return role
        lines = self.page_lines[p]
        idx = next(i for i, (lj, _) in enumerate(lines) if lj == li)
        for _, ln in reversed(lines[max(0, idx - 8):idx]):
            role = _role(ln.text)
            if role:
                return role
        return None

    def label_evidence(self, text: str, key: str) -> list[float]:
        """present, exact, exact_other, distractor, attr, sim, sim_other, role, role_other, meaning for one label."""
        if (text, key) in self._label_cache:
            return self._label_cache[(text, key)]
        if not text:
            out = [0.0] * (len(_LABEL_FEATURES) - 1)
        else:
            exact = exact_other = distractor = attr = 0.0
            for m in self.lexicon.pattern.finditer(text):
                d = self.lexicon.labels[m.group()]
                fields = d.fields + (("effective_date", "expiry_date") if d.kind == "period" else ())
                if key in fields:
                    exact = 1.0
                elif fields:
                    exact_other = 1.0
                if d.kind == "distractor":
                    distractor = 1.0
                if d.attr is not None and d.attr == _field_attr(key):
                    attr = 1.0
            sims = self._sims.get(text)
            if sims is None:
                sims = self._sims[text] = {k: _similarity(text, self.lexicon.by_field.get(k, ())) for k in FIELD_KEYS}
            role, frole = _role(text), field_role(key)
            role_f = 0.0 if role is None or frole is None else (1.0 if role == frole else -1.0)
            meaning = float(sum(w in text for w in DATE_MEANING_WORDS.get(key, ())))
            out = [1.0, exact, exact_other, distractor, attr, sims[key], max(v for k, v in sims.items() if k != key),
                   role_f, float(role == "other"), meaning]
        self._label_cache[(text, key)] = out
        return out


_EDGE_LENGTHS = (2, 3, 4)  # the lengths of a value's head and tail compared with the wordings
_DAYS_PER_YEAR = 365.25
_NO_DATE = -1.0  # a date feature where there is no date, or no later one


def edge_evidence(text: str, lexicon: Lexicon) -> list[float]:
    """lead_label, lead_sim, tail_label, tail_sim of a candidate's text: whether a lexicon label (any kind) opens or
    closes it with text beyond, and how much its first and last 2-4 characters look like any field's wording (a
    label the recognizer read glued to the value, ``险种鸿运两全保险``, whether the lexicon knows it or not)."""
    lead = lexicon.pattern.match(text)
    tail = any(m.end() == len(text) and m.start() > 0 for m in lexicon.pattern.finditer(text))
    heads = [_similarity(text[:k], lexicon.wordings) for k in _EDGE_LENGTHS if k < len(text)]
    tails = [_similarity(text[-k:], lexicon.wordings) for k in _EDGE_LENGTHS if k < len(text)]
    return [float(lead is not None and lead.end() < len(text)), max(heads, default=0), float(tail),
            max(tails, default=0)]


def _day(value: Optional[str]) -> Optional[int]:
    try:
        return date.fromisoformat(value).toordinal() if value else None
    except ValueError:
        return None


def date_evidence(value: Optional[str], days: Sequence[int]) -> list[float]:
    """years_after_first, years_to_next, years_to_last of a date among the distinct dates the document's candidates
    hold (``days``, sorted ordinals): a birth date stands decades before the policy's dates; -1 where the value is no
    date, or no later date exists."""
    day = _day(value)
    if day is None or not days:
        return [_NO_DATE] * 3
    later = [d for d in days if d > day]
    return [(d1 - d0) / _DAYS_PER_YEAR if d1 is not None else _NO_DATE
            for d0, d1 in ((days[0], day), (day, later[0] if later else None), (day, days[-1]))]


def _num(value: Optional[str]) -> Optional[float]:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _sortable(c: Candidate):
    if c.value is None:
        return None
    kind = FIELDS[c.key].kind
    if kind == "amount":
        return _num(c.value)
    if kind == "date":
        return c.value
    return None


def featurize(doc: DocLines, cands: Sequence[Candidate], lexicon: Lexicon,
              ernie: Optional[ErnieEvidence] = None) -> np.ndarray:
    """The (N, len(FEATURE_NAMES)) feature matrix of one document's candidates (without ``ernie`` its features
    are NaN, as where the extractor failed)."""
    ernie = ernie if ernie is not None else ErnieEvidence.missing(doc)
    ctx = DocumentFeatures(doc, lexicon)
    by_key: dict[str, list[Candidate]] = {}
    for c in cands:
        by_key.setdefault(c.key, []).append(c)
    keys_of_value: dict[str, set[str]] = {}
    for c in cands:
        if c.value is not None:
            keys_of_value.setdefault(c.value, set()).add(c.key)
    rows = np.zeros((len(cands), len(FEATURE_NAMES)), np.float32)
    geometry: dict[tuple, tuple] = {}
    edges: dict[str, list[float]] = {}
    days = sorted({d for c in cands if FIELDS[c.key].kind == "date" and (d := _day(c.value)) is not None})
    # page position among the pages that offer lines: pages hidden from extraction (a bundle's letter and terms,
    # stages/extraction/page_roles.py) or without text do not move the schedule away from where it is learned
    read_pages = {pi: rank for rank, pi in enumerate(sorted({pi for pi, _, _ in doc.flat}))}
    pages = len(read_pages)
    for i, c in enumerate(cands):
        rivals = by_key[c.key]
        p, li, c0 = c.chars[0]
        line = doc.line(c.chars[0])
        W, H = doc.page_sizes[p] if p < len(doc.page_sizes) else (1.0, 1.0)
        if c.chars not in geometry:  # the same span offered for several fields is looked at once
            box = ctx.span_box(c)
            geometry[c.chars] = (box, ctx.left_label(c, box), ctx.above_label(c, box), ctx.row_head(c, box),
                                 ctx.role_before(c))
        box, (left, left_gap, same_line), (above, above_gap, above_dx), row, rb = geometry[c.chars]
        f: list[float] = [float(FIELD_KEYS.index(c.key)), float(c.source == "rules"), c.rule_score]
        f += [float(c.strategy == s) for s in STRATEGIES]
        for text, gap in ((left, left_gap), (above, above_gap), (row, 0.0)):
            f += ctx.label_evidence(text, c.key) + [gap]
        frole = field_role(c.key)
        f += [float(same_line), above_dx / max(W, 1.0),
              0.0 if frole is None or rb is None else (1.0 if rb == frole else -1.0)]
        prev = line.text[:c0].rstrip()
        last = c.chars[-1]
        after = doc.line(last).text[last[2] + 1:].lstrip() if last[:2] == c.chars[0][:2] else ""
        f += [float(bool(prev) and prev[-1] in _CONNECTORS), _AFTER.get(after[:1], 0.0)]
        f += [(box.x0 + box.x1) / 2 / W, (box.y0 + box.y1) / 2 / H, (box.x1 - box.x0) / W, float(read_pages[p]), float(pages)]
        valid = c.value is not None and not c.issues
        f += [float(valid), float(len(c.issues)), float(len(c.text)), float(len(c.value or "")),
              sum(ch.isdigit() for ch in c.text) / max(1, len(c.text))]
        probs = [line.char_probs[ci] for (pp, ll, ci) in c.chars
                 if (pp, ll) == (p, li) and ci < len(line.char_probs)]
        f += [float(line.score), min(probs) if probs else float(line.score),
              float(np.mean(probs)) if probs else float(line.score)]
        values = {r.value for r in rivals}
        same = [r for r in rivals if r.value == c.value and c.value is not None]
        rule_scores = sorted({r.rule_score for r in rivals if r.source == "rules"}, reverse=True)
        rank = rule_scores.index(c.rule_score) if c.source == "rules" and c.rule_score in rule_scores else len(rule_scores)
        f += [float(len(values)), float(len(same)), float(len({(r.source, r.strategy) for r in same})), float(rank),
              max((r.rule_score for r in same if r.source == "rules"), default=0.0),
              float(len(keys_of_value.get(c.value, ())) - 1) if c.value is not None else 0.0]
        order = sorted({ctx.order[r.chars[0][:2]] * 1000 + r.chars[0][2] for r in rivals})
        pos = ctx.order[(p, li)] * 1000 + c0
        f.append(order.index(pos) / max(1, len(order) - 1) if len(order) > 1 else 0.0)
        sv = _sortable(c)
        distinct = sorted({s for s in (_sortable(r) for r in rivals) if s is not None})
        f.append(distinct.index(sv) / max(1, len(distinct) - 1) if sv is not None and len(distinct) > 1 else -1.0)
        num = _num(c.value) if FIELDS[c.key].kind == "amount" else None
        f.append(math.log10(num + 1.0) if num is not None and num >= 0 else -1.0)
        f.append(float(sum(1 for r in rivals if r.chars[0][:2] == (p, li) and r.value != c.value)))
        f += ernie.features(c)
        if c.text not in edges:
            edges[c.text] = edge_evidence(c.text, lexicon)
        f += edges[c.text]
        f += date_evidence(c.value if FIELDS[c.key].kind == "date" else None, days)
        rows[i] = f
    return rows
