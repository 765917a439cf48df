"""The learned decision for one document: candidates (rule strategies + type detectors + detected addresses joined
with their wrapped end + ERNIE-Layout's spans), features (ERNIE-Layout's probabilities among them), the scorer's
P, the joint assignment; the chosen candidates go to the field assembler with P as their score."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Mapping, Optional, Sequence

import numpy as np

from stages.contracts.fields import FIELD_KEYS
from stages.contracts.types import TextLine
from stages.extraction.decisions import Proposal
from stages.extraction.field_specs import FIELDS
from stages.extraction.label_similarity import best_similarity
from stages.extraction.learned.assign import RoleCells, Scored, assign, consistent, role_cells
from stages.extraction.learned.candidates import Candidate, DocLines, merge, rule_candidates
from stages.extraction.learned.date_reread import holds_unread_date, reread_dates
from stages.extraction.learned.detectors import DATE_FIELDS, detector_candidates
from stages.extraction.learned.ernie_evidence import ErnieEvidence
from stages.extraction.learned.features import ROLE_OF, featurize
from stages.extraction.learned.scorer import VACANT_FREE, Scorer
from stages.extraction.learned.wrapped import wrapped_candidates
from stages.extraction.rule_decision import rules_decision
from stages.extraction.rules.extract import RulesDecision
from stages.extraction.rules.lexicon import FULL_LEXICON, Lexicon
from stages.extraction.rules.lines import CJK_RE, normalized
from stages.extraction.strategies import LEARNED_PREFIX
from stages.extraction.wrap import MAY_WRAP
from stages.postprocess.values import ISSUE_AMOUNT_MISMATCH, Normalized
from stages.recognition.ctc import CharDict

if TYPE_CHECKING:
    from stages.extraction.ernie import Extraction


@dataclass(frozen=True)
class DocumentCandidates:
    """Everything the scorer sees of one document: its lines, candidates, their features and the lexicon used."""

    doc: DocLines
    candidates: list[Candidate]
    features: np.ndarray
    lexicon: Lexicon

    @cached_property
    def cells(self) -> RoleCells:
        """The document's role-headed table rows and columns (one computation for every scorer that decides)."""
        return role_cells(self.doc, self.lexicon)


def document_candidates(lines: Sequence[Sequence[TextLine]], page_sizes: Sequence[tuple[float, float]], today: date,
                        lexicon: Lexicon = FULL_LEXICON, chars: Optional[CharDict] = None,
                        ernie: Optional[Sequence[Optional["Extraction"]]] = None,
                        by_rules: Optional[RulesDecision] = None, redecode: bool = True,
                        label_reread: bool = True) -> DocumentCandidates:
    """Candidates and features of one document (the one path used by training and at runtime). With ``chars``,
    label lines are re-read against the lexicon first (``extraction.label_reread``; not with ``label_reread`` off),
    as the rules do, and dates that lost a numeral are read again from their frames (``learned/date_reread.py``;
    not with ``redecode`` off). ``ernie``:
    per page ERNIE-Layout's reading (:func:`~stages.extraction.learned.ernie_evidence.run_extractor`; None for a
    page it failed on); without it the ERNIE features are NaN and ERNIE offers no candidates. ``by_rules``: the
    document's rule decision where the caller made it already
    (:func:`~stages.extraction.rule_decision.rules_decision` of the same lines and lexicon, ``chars`` where labels
    are re-read)."""
    doc = DocLines.build(lines, page_sizes)
    if by_rules is None:
        by_rules = rules_decision(doc.flat, today, lexicon, chars if label_reread else None)
    evidence = ErnieEvidence(doc, ernie, today) if ernie is not None else ErnieEvidence.missing(doc)
    reread = reread_dates(doc, today, chars) if chars is not None and redecode else []
    ruled = rule_candidates(doc, by_rules)
    detected = detector_candidates(doc, today, lexicon)
    claimed = [rc.match.text for k, rc in by_rules.best.items() if k not in MAY_WRAP and rc.match.text]
    wrapped = wrapped_candidates(doc, lines, detected, today, claimed, ruled)
    cands = merge(ruled + detected + wrapped + reread + evidence.candidates)
    return DocumentCandidates(doc, cands, featurize(doc, cands, lexicon, evidence), lexicon)


@dataclass(frozen=True)
class Decided:
    """The learned decision of one document: per field its chosen candidate (the field assembler's candidate), and
    per field left empty ``vacant``: the highest P among its candidates that the rest of the assignment leaves room
    for, or would with another field's rival (0 where there is none), the evidence about whether it is really
    absent."""

    fields: dict[str, list[Proposal]]
    vacant: dict[str, float]
    # the empty amount fields beside an amount printed alone in its box that no field took (:func:`unclaimed_amounts`)
    unclaimed: frozenset[str] = frozenset()


def vacant_p(scored: Sequence[Scored], chosen: dict[str, Candidate], cells: RoleCells) -> dict[str, float]:
    """Per field without a chosen candidate, the highest P of its candidates that could join ``chosen`` (no span
    another field holds, the date, amount and person constraints kept), or that another field holds where a rival of
    that field's own would free it (:func:`_freed`); 0 for a field with none."""
    out = {k: 0.0 for k in FIELD_KEYS if k not in chosen}
    rivals: dict[str, list[Candidate]] = {}  # per chosen field, its other values the scorer does not rule out
    for s in scored:
        key = s.candidate.key
        if key in chosen and s.p >= VACANT_FREE and s.candidate.value != chosen[key].value:
            rivals.setdefault(key, []).append(s.candidate)
    for s in sorted(scored, key=lambda s: -s.p):
        key = s.candidate.key
        if key in out and out[key] == 0.0 and s.p > 0.0 and (
                consistent({**chosen, key: s.candidate}, cells, added=key)
                or _freed(s.candidate, rivals, chosen, cells)):
            out[key] = s.p
    return out


def _freed(c: Candidate, rivals: Mapping[str, Sequence[Candidate]], chosen: dict[str, Candidate],
           cells: RoleCells) -> bool:
    """Whether ``c`` (a candidate of an empty field) could join ``chosen`` if a field holding its characters took
    one of its ``rivals`` (its other values at P VACANT_FREE or more): the page then holds a value for the empty
    field, and the two fields' choice decides which (a premium printed under a label more like the sum insured's,
    the sum insured's own figures left as its rival)."""
    return any(c.span & held.span and any(consistent({**chosen, other: r, c.key: c}, cells)
                                          for r in rivals.get(other, ()))
               for other, held in chosen.items())


_DECOR = re.compile(r"[\s,，.¥￥$元圆整]|RMB|人民币")  # what prints around an amount in its box

# What may follow a label that introduces its value: a separator, the value itself (a digit, a currency sign, a
# bracket), or a connective of a narrative sentence (保险费为…, 保险期间自…).
_CONNECTIVES = frozenset("为是自从")
_SENTENCE_MARKS = frozenset(",;、。，；!！?？")  # not ".": leader dots are often read as one
_LONGER_LABEL = 4  # CJK characters a longer label word may add after a known label (投保人证件号 + 码)
# a wording printed as a label: a run of Chinese characters before its colon that no sentence leads into
_BEFORE_COLON = re.compile(r"(?<![\u4e00-\u9fff,，;；、。])([\u4e00-\u9fff]{2,10})\s*[:：]")
LABELLED_LIKE = 0.5  # an unknown wording at least this like one of a field's labels prints that field's label
# a period given as a term, not as dates (保障期限：至100周岁, 保险期间：终身, 5年): no expiry date is printed for it
_TERM = re.compile(r"\s*[:：]?\s*(?:终身|长期|至\s*\d{1,3}\s*周?岁|\d{1,3}\s*(?:年|个月|天|日))\s*$")


def _introduces(norm: str, end: int) -> bool:
    """Whether the label ending at ``end`` of ``norm`` (a line's NFKC text) stands as a label: the label, or a
    longer label word it begins (at most ``_LONGER_LABEL`` more CJK characters: a wording the lexicon holds only
    the start of), ends the text, is followed by a connective, or stands before a space, a colon, leader dots or
    another non-CJK character that does not end or split a clause. Not a label: a mention inside a sentence
    (…缴纳保险费，超过宽限期…, 保险金额、保险费均以人民币计价)."""
    run = end
    while run < len(norm) and CJK_RE.match(norm[run]):
        if norm[run] in _CONNECTIVES and run - end <= _LONGER_LABEL:
            return True
        run += 1
    if run - end > _LONGER_LABEL:
        return False
    return run >= len(norm) or norm[run].isspace() or norm[run] not in _SENTENCE_MARKS


def labelled_fields(texts: Iterable[str], lexicon: Lexicon) -> frozenset[str]:
    """The fields that a field or period label of ``lexicon`` printed as a label in ``texts`` (a document's lines)
    names (:func:`_introduces`; labels are matched with the line's spaces removed, as OCR splits them), and those
    that a wording outside ``lexicon`` before a colon is at least ``LABELLED_LIKE`` like a label of (an insurer's own
    ``身故保险金受益人：`` where the lexicon holds only ``受益人``'s other forms). A field left empty whose label is
    printed was more often misread than absent (``scorer.empty_kind``). A period label followed on its line by a
    term and nothing else (保障期限：至100周岁, 保险期间：终身) prints no expiry date."""
    out: set[str] = set()
    for text in texts:
        norm, _, comp, at = normalized(text)  # as the rules' text boxes read it
        for m in lexicon.pattern.finditer(comp):
            label = lexicon.labels.get(m.group())
            if label is not None and label.kind in ("field", "period") and _introduces(norm, at[m.end() - 1] + 1):
                term = label.kind == "period" and _TERM.match(norm, at[m.end() - 1] + 1) is not None
                out.update(k for k in label.fields if k and not (term and k == "expiry_date"))
        for m in _BEFORE_COLON.finditer(norm):
            word = m.group(1)
            if lexicon.pattern.search(word) is None:  # a lexicon word in it is read above, or names no field
                out.update(_like_labels(word, lexicon))
    return frozenset(out)


def misread_likely(labelled: frozenset[str], texts: Sequence[str], today: date) -> frozenset[str]:
    """The fields an empty value of which is more likely misread than absent (``scorer.empty_kind``): ``labelled``,
    those whose label is printed (:func:`labelled_fields` of ``texts``), and every date field where a printed date
    does not read as one (``date_reread.holds_unread_date``: 二二年九月十三日, a thin 〇 lost twice, leaves a page with
    no date to offer)."""
    return (labelled | frozenset(DATE_FIELDS)) if holds_unread_date(texts, today) else labelled


def _like_labels(word: str, lexicon: Lexicon) -> set[str]:
    """The field (or fields, tied) of whose labels ``word`` is the most like one, if at least ``LABELLED_LIKE``;
    where it names a person's role (投保, 被保, 受益), among that person's fields only (投保人证件号码 is as like
    被保险人证件号码 as a label can be)."""
    role = next((r for lead, r in ROLE_OF.items() if lead in word), None)
    sims = {k: best_similarity(word, lexicon.by_field.get(k, ())) for k in FIELD_KEYS
            if role is None or k.startswith(role + "_")}
    best = max(sims.values())  # every role has fields
    return {k for k, v in sims.items() if v == best} if best >= LABELLED_LIKE else set()


def reading_issues(c: Candidate, cands: Sequence[Candidate]) -> tuple[str, ...]:
    """``c``'s issues, and ``amount_mismatch`` where a candidate reading the same value of the field from characters
    ``c`` shares has it: the disagreement of two printed forms is the page's, whichever candidate is chosen (only
    the rules hold a capital amount against the figures printed with it). Issues of another reading's own
    characters (a figure's ``amount_grouping`` beside the capital amount chosen) are not ``c``'s."""
    span = c.span
    shared = any(ISSUE_AMOUNT_MISMATCH in o.issues and o.key == c.key and o.value == c.value and span & o.span
                 for o in cands)
    return tuple(dict.fromkeys(c.issues + ((ISSUE_AMOUNT_MISMATCH,) if shared else ())))


def decide(dc: DocumentCandidates, scorer: Scorer, carried: frozenset[str] = frozenset()) -> Decided:
    """The assignment's candidate per field, as the field assembler's candidate (score = P, method ``learned``,
    ``how`` = source:strategy, rivals = other values offered for the field, margin = P over the best of them), and
    the vacant P of the fields left empty.
    Where a learned wording (an adapted folder's) offers the chosen value through another candidate, ``how`` names
    it too (``detector:name+rules:learned_label_right``): its support is part of the features behind P.
    ``carried``: the fields rarely really absent (:func:`~stages.extraction.learned.assign.assign`)."""
    learned = {(c.key, c.value): f"{c.source}:{c.strategy}" for c in dc.candidates
               if c.strategy.startswith(LEARNED_PREFIX) and c.value is not None}
    probs = scorer.predict(dc.features)
    scored = [Scored(c, float(p)) for c, p in zip(dc.candidates, probs)]
    best_other: dict[str, dict[Optional[str], float]] = {}
    for s in scored:
        d = best_other.setdefault(s.candidate.key, {})
        d[s.candidate.value] = max(d.get(s.candidate.value, 0.0), s.p)
    chosen = {k: s for k, s in assign(scored, dc.cells, carried).items() if s is not None}
    out: dict[str, list[Proposal]] = {}
    for key, s in chosen.items():
        c = s.candidate
        others = [p for v, p in best_other[key].items() if v != c.value]
        how = f"{c.source}:{c.strategy}"
        if (key, c.value) in learned and not c.strategy.startswith(LEARNED_PREFIX):
            how += "+" + learned[(key, c.value)]
        out[key] = [Proposal(key, c.text, c.chars, round(s.p, 4), "learned", how,
                             len(others), round(s.p - max(others), 4) if others else 1.0,
                             Normalized(c.value, reading_issues(c, dc.candidates)), c.read_as)]
    picked = {k: s.candidate for k, s in chosen.items()}
    return Decided(out, vacant_p(scored, picked, dc.cells), unclaimed_amounts(dc, picked))


def unclaimed_amounts(dc: DocumentCandidates, chosen: Mapping[str, Candidate]) -> frozenset[str]:
    """The amount fields left empty while the page prints a valid amount alone in its box (a table cell or a value
    after its label, not a figure inside a sentence) whose characters no chosen field holds: a policy prints its sum
    insured and its premium, so the amount left over is more likely the empty field's, under a wording that misled
    the assignment (缴费金额 taken for the sum insured, the sum itself left over), than the field is absent."""
    empty = [k for k in FIELD_KEYS if FIELDS[k].kind == "amount" and k not in chosen]
    if not empty:
        return frozenset()
    held = frozenset().union(*(c.span for c in chosen.values()))
    # another printing of a chosen amount (its figures beside its capital form: 壹拾万元整（小写：￥100,000.00）) is
    # no amount left over
    amounts = [c for k, c in chosen.items() if FIELDS[k].kind == "amount"]
    values, rows = {c.value for c in amounts}, {ref[:2] for c in amounts for ref in c.chars}
    lone = any(c.value is not None and not c.issues and FIELDS[c.key].kind == "amount" and not (c.span & held)
               and c.value not in values and c.chars[0][:2] not in rows and _alone(dc, c) for c in dc.candidates)
    return frozenset(empty) if lone else frozenset()


def _alone(dc: DocumentCandidates, c: Candidate) -> bool:
    """Whether ``c``'s characters are all of its line's text after a label's colon, but spaces, separators, a
    currency sign and a unit."""
    (p, li, c0), n = c.chars[0], len(c.chars)
    if any(ref[:2] != (p, li) for ref in c.chars):
        return False
    text = dc.doc.line(c.chars[0]).text
    colon = max(text.rfind(":", 0, c0), text.rfind("：", 0, c0))
    return len(_DECOR.sub("", text[colon + 1:])) <= n
