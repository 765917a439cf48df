"""The extraction stage: OCR lines of a document -> field candidates (rules, ERNIE-Layout, or the learned decision
over both) -> :class:`~stages.extraction.assemble.FieldAssembler` -> ``fields``, review reasons, diagnostics."""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from datetime import date
from typing import Any, Iterable, Optional, Sequence

from stages.contracts.config import DocpipeConfig
from stages.extraction.adapted import REASON_UNCALIBRATED, AdaptedFolder, is_adapted, load_adapted
from stages.extraction.as_default import merged, same_values
from stages.extraction.assemble import FieldAssembler
from stages.extraction.confidence import calibration_folder, load_calibrators
from stages.extraction.decisions import Decision, Proposal, read_value
from stages.extraction.field_specs import FIELDS
from stages.extraction.hybrid import arrange_all, check_policies
from stages.extraction.rule_decision import rules_decision
from stages.extraction.rules import RuleMatch
from stages.extraction.rules.extract import RulesDecision, winners
from stages.extraction.rules.records import flat_lines, match_chars
from stages.extraction.rules.lexicon import FULL_LEXICON, LabelWithholding, Lexicon, extend_lexicon, withheld_lexicon
from stages.extraction.strategies import LEARNED_PREFIX
from stages.postprocess.values import compact
from stages.recognition.ctc import CharDict
from stages.contracts.types import Page, TextLine

log = logging.getLogger(__name__)

# the decision sources of each extraction method (a field records which of them decided it)
SOURCES: dict[str, tuple[str, ...]] = {"rules": ("rules",), "model": ("model",), "hybrid": ("rules", "model"),
                                      "learned": ("learned",)}


def rule_candidate(m: RuleMatch, flat_lines: Sequence[tuple[int, int, TextLine]]) -> Proposal:
    return Proposal(m.key, m.text, match_chars(m, flat_lines), float(m.score), "rules", m.method, m.rivals, m.margin,
                    m.normalized)


def _same_value(key: str, a: Proposal, b: Proposal, today: date) -> bool:
    """One span, or two printings of one normalized value (a date printed twice, an amount in words and figures)."""
    if (a.text, a.chars) == (b.text, b.chars):
        return True
    va = read_value(a, today).value
    return va is not None and va == read_value(b, today).value


@dataclass(frozen=True)
class DocumentFields:
    """What extraction found in one document: schema-v1 ``fields``, review reasons, diagnostics."""

    fields: dict[str, Any]
    review_reasons: list[str]
    diagnostics: dict[str, Any]


@dataclass(frozen=True)
class LearnedDecision:
    """The learned decision of one document: the candidate per field; the fields an adapted folder's refit scorer
    decides otherwise than the shipped scorer; the shipped decision's vacant P of each field left empty; and its empty
    amount fields beside an amount no field took (``learned.extract.Decided``)."""

    fields: dict[str, list[Proposal]]
    otherwise: tuple[str, ...]
    vacant: dict[str, float]
    unclaimed: frozenset[str]


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
        self.redecode = ec.redecode  # constrained re-decoding: invalid values, and dates that lost a numeral
        # extraction.model_dir: an adapted folder (learned wordings, maybe an ERNIE fine-tune in ernie/) or a plain
        # ERNIE-Layout export (docs/adaptation.md)
        self.adapted: Optional[AdaptedFolder] = load_adapted(ec.model_dir) if is_adapted(ec.model_dir) else None
        self.lexicon: Lexicon = extend_lexicon(FULL_LEXICON, self.adapted.pairs) if self.adapted else FULL_LEXICON
        self._drawn: Optional[tuple[str, Lexicon]] = None  # the last document's withheld lexicon, by its text
        self._default: Optional["ExtractionStage"] = None  # this stage without its adapted folder, made on first use
        # the last document's lines, page sizes and ERNIE-Layout reading, shared with the default stage (the same
        # model): a document decided with and without the folder is read by ERNIE-Layout once
        self._ernie_memo: list[Any] = []
        self.policy = dict(ec.policy) if ec.method == "hybrid" else {}
        check_policies(self.policy)
        self.model = None
        if ec.method in ("model", "hybrid", "learned"):  # learned: ERNIE-Layout is one evidence source of the scorer
            from stages.extraction.ernie import ErnieExtractor

            model_dir = ec.model_dir if self.adapted is None else self.adapted.ernie_dir
            self.model = ErnieExtractor(config.predictor, model_dir=model_dir)
        required = config.review.required_fields
        if required is None:
            required = tuple(k for k, s in FIELDS.items() if s.required)
        rc = config.review
        # one calibrator per decision source; a source without one sends its documents to review
        calibrators = load_calibrators(calibration_folder(rc.calibration_dir, ec.model_dir)) if rc.calibrated else {}
        self.scorer = None
        self.refit = None
        self.carried: frozenset[str] = frozenset()  # fields rarely really absent (learned.assign.CARRIED_P)
        if ec.method == "learned":
            from stages.extraction.learned.assign import RARELY_ABSENT
            from stages.extraction.learned.scorer import Scorer, load_score_calibrator

            self.scorer = Scorer.load(ec.scorer_dir)
            # an adapted folder's refit scorer decides; the shipped one says which decisions its calibration covers
            self.refit = Scorer.load(self.adapted.scorer_dir) if self.adapted and self.adapted.scorer_dir else None
            learned = load_score_calibrator(ec.scorer_dir) if rc.calibrated else None
            if learned is not None:
                calibrators["learned"] = learned
                self.carried = learned.rarely_absent(RARELY_ABSENT)
            # the rules' own decision, with the rules' calibrator: its confidence of a value it shares with the
            # learned decision is evidence about that value (stages/extraction/learned/confidence.py)
            rules_cal = {"rules": calibrators["rules"]} if "rules" in calibrators else {}
            self.rules_assembler = FieldAssembler(
                chars, rc.confidence_threshold, required, redecode=ec.redecode, calibrators=rules_cal,
                max_error_rate=rc.max_document_error_rate if rc.calibrated else 1.0,
                min_score=rc.min_extractor_score, min_margin=rc.min_rival_margin, lexicons=ec.lexicons,
                sources=("rules",),
            )
        self.sources = SOURCES[ec.method]
        missing = [s for s in self.sources if s not in calibrators]
        if missing:
            log.info("no calibrator for %s: documents they decide go to review", ", ".join(missing))
        self.assembler = FieldAssembler(
            chars, rc.confidence_threshold, required, redecode=ec.redecode, calibrators=calibrators,
            max_error_rate=rc.max_document_error_rate if rc.calibrated else 1.0,
            min_score=rc.min_extractor_score, min_margin=rc.min_rival_margin, lexicons=ec.lexicons,
            sources=self.sources, guessed_labels_review="rules" in self.sources,
        )

    def model_candidates(
        self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page], today: date
    ) -> dict[str, Proposal]:
        from stages.extraction.ernie import Extraction, ExtractorPage

        assert self.model is not None
        inputs = [ExtractorPage.from_text_lines(page_lines, p.width, p.height) for page_lines, p in zip(lines, pages)]
        best: dict[str, Proposal] = {}
        for pi, ex in enumerate(self.model.extract_batch(inputs)):
            if not isinstance(ex, Extraction):
                raise RuntimeError(f"extractor failed on page {pi}: {ex.message}")
            for key, span in ex.valid_fields([ln.text for ln in lines[pi]], today).items():
                cand = Proposal(key, span.text, tuple((pi, li, ci) for li, ci in span.chars), float(span.prob), "model")
                if key not in best or cand.prob > best[key].prob:
                    best[key] = cand
        return best

    def rules_decision(self, lines: Sequence[Sequence[TextLine]], today: date) -> RulesDecision:
        """One document's rule decision (labels re-read first where configured), with the document's lexicon."""
        flat = flat_lines(lines)
        lexicon = self.document_lexicon(ln.text for _, _, ln in flat)
        return rules_decision(flat, today, lexicon, self.chars if self.label_reread else None)

    def rules_candidates(self, lines: Sequence[Sequence[TextLine]], today: date,
                         decision: Optional[RulesDecision] = None) -> dict[str, Proposal]:
        """The rules' own choice per field, from ``decision`` (:meth:`rules_decision` of the same lines) or made."""
        flat = flat_lines(lines)
        out = {}
        if decision is None:
            decision = self.rules_decision(lines, today)
        for key, m in winners(decision).items():
            if m is not None and key in FIELDS:
                out[key] = rule_candidate(m, flat)
        return out

    def document_lexicon(self, texts: Iterable[str]) -> Lexicon:
        """The label lexicon for one document: the full one plus an adapted folder's learned wordings, or
        (measurements only) one with a fraction of its wordings withheld per document, then the learned ones."""
        fraction, seed = self.withhold.fraction, self.withhold.seed
        if not fraction:
            return self.lexicon
        text = "\n".join(texts)
        if self._drawn is None or self._drawn[0] != text:  # the rules and the learned decision share one draw
            lexicon = withheld_lexicon(fraction, seed, text)
            self._drawn = (text, extend_lexicon(lexicon, self.adapted.pairs) if self.adapted else lexicon)
        return self._drawn[1]

    def learned_document(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page], today: date,
                         by_rules: Optional[RulesDecision] = None):
        """The learned decision's candidates and features of one document (stages/extraction/learned), ERNIE-Layout
        run once over all its pages (a page it fails on leaves its evidence missing); ``by_rules``: the document's
        :meth:`rules_decision`, where made already."""
        from stages.extraction.learned.ernie_evidence import run_extractor
        from stages.extraction.learned.extract import document_candidates

        lexicon = self.document_lexicon(ln.text for page in lines for ln in page)
        sizes = [(p.width, p.height) for p in pages]
        ernie = None
        if self.model is not None:
            memo = self._ernie_memo
            if memo and memo[0] is lines and memo[1] == sizes:
                ernie = memo[2]
            else:
                ernie = run_extractor(self.model, lines, sizes)
                memo[:] = [lines, sizes, ernie]
        return document_candidates(lines, sizes, today, lexicon, self.chars, ernie, by_rules, self.redecode,
                                   self.label_reread)

    def learned_candidates(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page],
                           today: date) -> dict[str, list[Proposal]]:
        return self.learned_decision(lines, pages, today).fields

    def learned_decision(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page], today: date,
                         by_rules: Optional[RulesDecision] = None,
                         ) -> LearnedDecision:
        """The learned decision (:class:`LearnedDecision`); the refit scorer of an adapted folder decides a field
        otherwise where it gives another value, or empty against a value, or a value against empty.
        Where both decide the same value (the same span, or another printing of the same normalized value), the
        shipped scorer's candidate (its span and P) stands, so the shipped calibration, fitted on that P, still
        holds; the others are uncalibrated (docs/adaptation.md). The refit scorer decides only documents that print
        one of the folder's learned wordings (:meth:`prints_learned`): fitted on the corrected forms, it decides
        other forms worse than the shipped scorer."""
        from stages.extraction.learned.extract import decide

        assert self.scorer is not None
        dc = self.learned_document(lines, pages, today, by_rules)
        shipped = decide(dc, self.scorer, self.carried)
        if self.refit is None or not self.prints_learned(lines):
            return LearnedDecision(shipped.fields, (), shipped.vacant, shipped.unclaimed)
        refit = decide(dc, self.refit, self.carried).fields
        out, otherwise = {}, []
        for key in sorted(set(shipped.fields) | set(refit)):
            s, r = shipped.fields.get(key), refit.get(key)
            if s is not None and r is not None and _same_value(key, s[0], r[0], today):
                out[key] = s
                continue
            otherwise.append(key)
            if r is not None:
                out[key] = r
        return LearnedDecision(out, tuple(otherwise), {k: p for k, p in shipped.vacant.items() if k not in out},
                               frozenset(k for k in shipped.unclaimed if k not in out))

    def prints_learned(self, lines: Sequence[Sequence[TextLine]]) -> bool:
        """Whether the document prints one of the adapted folder's learned wordings: it is of a form the corrections
        showed."""
        if self.adapted is None:
            return False
        text = "\n".join(compact(ln.text) for page in lines for ln in page)
        return any(compact(w.text) in text for w in self.adapted.wordings)

    def learned_fields(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page],
                       today: date) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        """The learned decision's fields; where the rules' own decision outputs the same value, its calibrated
        confidence holds for that field as well (stages/extraction/learned/confidence.py)."""
        by_rules = self.rules_decision(lines, today)  # decided once: the learned one's candidates, and its peer
        learned = self.learned_decision(lines, pages, today, by_rules)
        cands, vacant = learned.fields, learned.vacant
        decisions = self.assembler.decisions(cands, lines, today)
        fields, reasons, diagnostics = self.assembler.assemble(cands, lines, today, flag_disagreement=(),
                                                               decisions=decisions)
        calibrators = self.assembler.calibrators
        if "learned" in calibrators and "rules" in calibrators:  # else uncalibrated:learned, or learned P alone
            fields, reasons, diagnostics = self._with_rules_agreement(cands, decisions, fields, lines, pages, today,
                                                                      vacant, learned.unclaimed, by_rules)
        diagnostics["vacant"] = {k: round(p, 6) for k, p in vacant.items()}
        if self.refit is not None:
            diagnostics["adapted_scorer"] = {"decided_otherwise": list(learned.otherwise)}
        return fields, reasons, diagnostics

    def _with_rules_agreement(self, cands: dict[str, list[Proposal]], decisions: dict[str, Optional[Decision]],
                              fields: dict[str, Any],
                              lines: Sequence[Sequence[TextLine]], pages: Sequence[Page],
                              today: date, vacant: dict[str, float], unclaimed: frozenset[str],
                              by_rules: RulesDecision) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        """The learned decisions assembled again, with the confidence of a value the rules' own decision shares
        from the learned calibration's map for shared values, and P(really absent) of the empty fields from their
        vacant P and whether they are more likely misread than absent: a label of theirs printed, a date that does
        not read, an amount no field took (``unclaimed``) (stages/extraction/learned/confidence.py)."""
        from stages.extraction.learned.confidence import AgreementCalibrator, RulesView, agreement, document_capture
        from stages.extraction.learned.extract import labelled_fields, misread_likely

        calibrators = self.assembler.calibrators
        rules_cands, _ = arrange_all({}, self.prefer, {}, self.rules_candidates(lines, today, by_rules), today)
        rules = RulesView.from_assembled(*self.rules_assembler.assemble(rules_cands, lines, today))
        agree, rules_found = agreement(fields, rules)
        captures = {k: pages[f["page"]].capture if f["page"] < len(pages) else "scan"
                    for k, f in fields.items() if f is not None}
        capture = document_capture({p.capture for p in pages})
        texts = [ln.text for page in lines for ln in page]
        labelled = labelled_fields(texts, self.document_lexicon(texts))
        doubted = misread_likely(labelled, texts, today) | unclaimed
        assembler = copy.copy(self.assembler)  # the same decisions, confidence from both calibrators
        assembler.calibrators = {**calibrators, "learned": AgreementCalibrator(calibrators["learned"], agree, rules_found,
                                                                               vacant, capture, captures,
                                                                               doubted)}
        fields, reasons, diagnostics = assembler.assemble(cands, lines, today, flag_disagreement=(),
                                                          decisions=decisions)
        diagnostics["rules"] = {"agree": sorted(agree), "found": sorted(rules.values),
                                "agree_confidence": agree, "capture": captures,
                                "document_capture": capture, "labelled": sorted(labelled),
                                "misread_likely": sorted(doubted)}
        return fields, reasons, diagnostics

    def _vouched(self, key: str) -> bool:
        """A field decided through a learned wording keeps the shipped calibrators' confidence only in the learned
        decision, and only when the folder's held-out check confirmed its wordings (docs/decisions.md: the rules
        alone, vouched the same way, sent a wrong document through)."""
        return self.scorer is not None and self.adapted is not None and self.adapted.vouched(key)

    def __call__(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page]) -> DocumentFields:
        today = date.today()
        if self.scorer is not None:
            fields, reasons, diagnostics = self.learned_fields(lines, pages, today)
        else:
            model = self.model_candidates(lines, pages, today) if self.model is not None else {}
            rules = self.rules_candidates(lines, today) if self.method in ("rules", "hybrid") else {}
            cands, disagree = arrange_all(self.policy, self.prefer, model, rules, today)
            # the per-field policy decides where a disagreement is a review reason; the assembler routes it
            flagged = {reason.split(":", 1)[1] for reason in disagree}
            fields, reasons, diagnostics = self.assembler.assemble(cands, lines, today, flag_disagreement=flagged)
        doubtful = self._doubtful(diagnostics)
        if doubtful:
            # learned evidence no held-out check vouched for, or a refit decision: the shipped calibrator never saw it
            default = self._default_stage()
            if default is not None:
                plain = default(lines, pages)
                if same_values(plain.fields, fields, doubtful):  # those fields as the default decides them
                    a = self.assembler
                    return DocumentFields(*merged((fields, diagnostics), (plain.fields, plain.diagnostics), doubtful,
                                                  a.required, a.max_error_rate, a.threshold))
            reasons = [REASON_UNCALIBRATED] + reasons
        return DocumentFields(fields, reasons, diagnostics)

    def _doubtful(self, diagnostics: dict[str, Any]) -> list[str]:
        """The fields of an adapted folder without a calibration of its own that no calibrator speaks for: decided
        through a learned wording no held-out check vouched for, or otherwise by the refit scorer than by the
        shipped one."""
        if self.adapted is None or self.adapted.calibrated:
            return []
        unvouched = {key for key, ev in diagnostics["evidence"].items()
                     if LEARNED_PREFIX in str(ev.get("how", "")) and not self._vouched(key)}
        return sorted(unvouched | set(diagnostics.get("adapted_scorer", {}).get("decided_otherwise", ())))

    def _default_stage(self) -> Optional["ExtractionStage"]:
        """This stage without its adapted folder (the shipped lexicon, scorer, ERNIE-Layout and calibrators; the
        models shared, not loaded again), or None where the folder holds an ERNIE-Layout fine-tune, whose
        evidence the default pipeline does not have (it would need the shipped weights loaded beside it)."""
        if self.adapted is None or self.adapted.ernie_dir is not None or self.scorer is None:
            return None
        if self._default is None:
            default = copy.copy(self)
            default.adapted, default.lexicon, default.refit, default._drawn = None, FULL_LEXICON, None, None
            self._default = default
        return self._default
