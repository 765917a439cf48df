"""The extraction stage: OCR lines of a document -> field candidates (ERNIE-Layout model and/or rules)
-> :class:`~stages.extraction.assemble.FieldAssembler` -> ``fields``, review reasons, diagnostics."""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from datetime import date
from typing import Any, Optional, Sequence

import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.extraction.assemble import Candidate, FieldAssembler
from stages.extraction.confidence import load_calibrator
from stages.extraction.field_specs import FIELDS
from stages.extraction.hybrid import arrange_all, check_policies
from stages.extraction.label_reread import LabelIndex, reread_labels
from stages.extraction.rules import RuleMatch, extract_rules
from stages.extraction.rules.lexicon import FULL_LEXICON, LabelWithholding, withheld_lexicon
from stages.recognition.ctc import CharDict
from stages.contracts.types import Page, TextLine

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _RuleLine:
    text: str
    polygon: Any
    page: int
    char_u: tuple[float, ...] = ()  # character positions along the line (rules: wide blanks inside a box)
    vertical: bool = False


def locate(text: str, line_texts: Sequence[str]) -> Optional[list[tuple[int, int]]]:
    """Where ``text`` sits in the concatenation of ``line_texts``, ignoring whitespace on both sides:
    ``(line, char)`` positions of its non-space characters, or None."""
    flat = [(li, ci, ch) for li, t in enumerate(line_texts) for ci, ch in enumerate(t) if not ch.isspace()]
    hay = "".join(ch for _, _, ch in flat)
    needle = "".join(text.split())
    if not needle:
        return None
    at = hay.find(needle)
    if at < 0:
        return None
    return [(li, ci) for li, ci, _ in flat[at : at + len(needle)]]


def rule_candidate(m: RuleMatch, flat_lines: Sequence[tuple[int, int, TextLine]]) -> Candidate:
    involved = [flat_lines[i] for i in m.line_indices]
    pos = locate(m.text, [ln.text for _, _, ln in involved])
    chars: tuple[tuple[int, int, int], ...] = ()
    if pos:
        chars = tuple((involved[k][0], involved[k][1], ci) for k, ci in pos)
    return Candidate(m.key, m.text, chars, float(m.score), "rules", m.method, m.rivals, m.margin)


@dataclass(frozen=True)
class DocumentFields:
    """What extraction found in one document: schema-v1 ``fields``, review reasons, diagnostics."""

    fields: dict[str, Any]
    review_reasons: list[str]
    diagnostics: dict[str, Any]


class ExtractionStage:
    """Callable ``(lines per page, pages) -> DocumentFields``; one per worker. ``withhold`` is for measurements
    only (``docpipe eval --withhold-labels``)."""

    def __init__(self, config: DocpipeConfig, chars: CharDict, withhold: Optional[LabelWithholding] = None):
        ec = config.extraction
        self.method = ec.method
        self.prefer = ec.prefer
        self.withhold = withhold or LabelWithholding()
        self.chars = chars
        self.label_reread = ec.label_reread
        self.full_labels = LabelIndex(FULL_LEXICON)
        self.policy = dict(ec.policy) if ec.method == "hybrid" else {}
        check_policies(self.policy)
        self.model = None
        if ec.method in ("model", "hybrid"):
            from stages.extraction.ernie import ErnieExtractor

            self.model = ErnieExtractor(config.predictor, model_dir=ec.model_dir)
        required = config.review.required_fields
        if required is None:
            required = tuple(k for k, s in FIELDS.items() if s.required)
        rc = config.review
        self.scorer = None
        if ec.method == "learned":
            from stages.extraction.learned.scorer import Scorer, load_score_calibrator

            self.scorer = Scorer.load(ec.scorer_dir)
            calibrator = load_score_calibrator(ec.scorer_dir) if rc.calibrated else None
            # the rules' own decision, with the rules' calibrator: its confidence of a value it shares with the
            # learned decision is evidence about that value (stages/extraction/learned/confidence.py)
            self.rules_assembler = FieldAssembler(
                chars, rc.confidence_threshold, required, redecode=ec.redecode,
                calibrator=load_calibrator(rc.calibration_dir) if rc.calibrated else None,
                max_error_rate=rc.max_document_error_rate if rc.calibrated else 1.0,
                min_score=rc.min_extractor_score, min_margin=rc.min_rival_margin, lexicons=ec.lexicons,
            )
        else:
            calibrator = load_calibrator(rc.calibration_dir) if rc.calibrated else None
        self.assembler = FieldAssembler(
            chars, rc.confidence_threshold, required, redecode=ec.redecode, calibrator=calibrator,
            max_error_rate=rc.max_document_error_rate if rc.calibrated else 1.0,
            min_score=rc.min_extractor_score, min_margin=rc.min_rival_margin, lexicons=ec.lexicons,
        )

    def model_candidates(
        self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page], today: date
    ) -> dict[str, Candidate]:
        from stages.extraction.ernie import Extraction, ExtractorLine, ExtractorPage

        assert self.model is not None
        inputs = [
            ExtractorPage([ExtractorLine.from_text_line(ln) for ln in page_lines], float(p.width), float(p.height))
            for page_lines, p in zip(lines, pages)
        ]
        best: dict[str, Candidate] = {}
        for pi, ex in enumerate(self.model.extract_batch(inputs)):
            if not isinstance(ex, Extraction):
                raise RuntimeError(f"extractor failed on page {pi}: {ex.message}")
            for key, span in ex.valid_fields([ln.text for ln in lines[pi]], today).items():
                cand = Candidate(key, span.text, tuple((pi, li, ci) for li, ci in span.chars), float(span.prob), "model")
                if key not in best or cand.prob > best[key].prob:
                    best[key] = cand
        return best

    def rules_candidates(self, lines: Sequence[Sequence[TextLine]], today: date) -> dict[str, Candidate]:
        flat = [(pi, li, ln) for pi, page_lines in enumerate(lines) for li, ln in enumerate(page_lines)]
        fraction, seed = self.withhold.fraction, self.withhold.seed
        lexicon = withheld_lexicon(fraction, seed, "\n".join(ln.text for _, _, ln in flat)) if fraction else FULL_LEXICON
        texts = [ln.text for _, _, ln in flat]
        if self.label_reread:
            index = LabelIndex(lexicon) if fraction else self.full_labels
            texts = [reread_labels(ln, index, self.chars) for _, _, ln in flat]
        rule_lines = [_RuleLine(text, np.asarray(ln.polygon), pi, ln.char_u, ln.vertical)
                      for text, (pi, _, ln) in zip(texts, flat)]
        out = {}
        for key, m in extract_rules(rule_lines, today, lexicon).items():
            if m is not None and key in FIELDS:
                out[key] = rule_candidate(m, flat)
        return out

    def learned_document(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page], today: date):
        """The learned decision's candidates and features of one document (stages/extraction/learned)."""
        from stages.extraction.learned.extract import document_candidates, document_lexicon

        lexicon = document_lexicon(lines, self.withhold.fraction, self.withhold.seed)
        return document_candidates(lines, [(p.width, p.height) for p in pages], today, lexicon,
                                   self.chars if self.label_reread else None)

    def learned_candidates(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page],
                           today: date) -> dict[str, list[Candidate]]:
        from stages.extraction.learned.extract import decide

        assert self.scorer is not None
        return decide(self.learned_document(lines, pages, today), self.scorer)

    def learned_fields(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page], today: date) -> DocumentFields:
        """The learned decision's fields; where the rules' own decision outputs the same value, its calibrated
        confidence holds for that field as well (stages/extraction/learned/confidence.py)."""
        from stages.extraction.learned.confidence import AgreementCalibrator, RulesView, agreement

        cands = self.learned_candidates(lines, pages, today)
        fields, reasons, diagnostics = self.assembler.assemble(cands, lines, today, flag_disagreement=())
        if self.assembler.calibrator is None:
            return DocumentFields(fields, reasons, diagnostics)
        rules_cands, _ = arrange_all({}, self.prefer, {}, self.rules_candidates(lines, today), today)
        rules = RulesView.from_assembled(*self.rules_assembler.assemble(rules_cands, lines, today))
        agree, rules_found = agreement(fields, rules)
        assembler = copy.copy(self.assembler)  # the same decisions, confidence from both calibrators
        assembler.calibrator = AgreementCalibrator(self.assembler.calibrator, agree, rules_found)
        fields, reasons, diagnostics = assembler.assemble(cands, lines, today, flag_disagreement=())
        diagnostics["rules"] = {"agree": sorted(agree), "found": sorted(rules.values)}
        return DocumentFields(fields, reasons, diagnostics)

    def __call__(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page]) -> DocumentFields:
        today = date.today()
        if self.scorer is not None:
            return self.learned_fields(lines, pages, today)
        model = self.model_candidates(lines, pages, today) if self.model is not None else {}
        rules = self.rules_candidates(lines, today) if self.method in ("rules", "hybrid") else {}
        cands, disagree = arrange_all(self.policy, self.prefer, model, rules, today)
        # the per-field policy decides where a disagreement is a review reason; the assembler routes it
        flagged = {reason.split(":", 1)[1] for reason in disagree}
        return DocumentFields(*self.assembler.assemble(cands, lines, today, flag_disagreement=flagged))
