"""From the values proposed per field to the output's ``fields``: normalization, constrained CTC re-decoding,
cross-field validation, calibrated confidence (evidence.py, confidence.py), polygon and the review decision
(routing.py); the output is described in docs/schema.md.

Candidates come from the ERNIE-Layout extractor (``model``) and from the rules baseline (``rules``); both
point at characters of the OCR lines, so every field keeps its polygon, its recognition probabilities
and the line's stored CTC probabilities for re-decoding."""
from __future__ import annotations

import logging
from dataclasses import replace
from datetime import date
from typing import Any, Collection, Mapping, Optional, Sequence

import numpy as np

from stages.contracts.result import polygon_json
from stages.extraction.confidence import Calibrator
from stages.extraction.decisions import Decision, Proposal, read_value
from stages.extraction.evidence import FieldEvidence, gather
from stages.extraction.field_specs import FIELDS
from stages.extraction.lexicon_reread import lexicon_issues, reread
from stages.extraction.line_end import may_be_cut
from stages.extraction.redecode import redecode_candidates
from stages.extraction.same_person import same_person
from stages.extraction.wrap import MAY_WRAP, continuation_below
from stages.extraction.check_reading import CHECKED, WHOLE_RUNS, check_reading, disagrees
from stages.extraction.routing import (EXTRACTORS_DISAGREE, MAY_BE_CUT, MAY_CONTINUE, READERS_DISAGREE,
                                       evidence_reasons, route, uncalibrated_reasons)
from stages.postprocess.validate import validate_fields
from stages.postprocess.values import defects
from stages.recognition.ctc import CharDict
from stages.contracts.types import TextLine

log = logging.getLogger(__name__)

# kinds whose re-decoded reading must hold as many characters other than separators as the first one: re-decoding
# may change a character or drop a stray separator (29783..80), but a digit merged away (2,6000.0 -> 2,600.0) or a
# misread numeral dropped (贰佰储拾伍 -> 贰佰拾伍) changes an amount's magnitude or a date
_SAME_LENGTH = ("amount", "date")


def _value_chars(text: str) -> int:
    """The characters of ``text`` that are no separator: digits, letters, Chinese characters."""
    return sum(ch.isalnum() for ch in text)


class FieldAssembler:
    """Turns the values proposed per field into the schema's ``fields`` plus review reasons (and diagnostics)."""

    def __init__(
        self,
        chars: CharDict,
        confidence_threshold: float,
        required: Sequence[str],
        redecode: bool = True,
        calibrators: Optional[Mapping[str, Calibrator]] = None,
        max_error_rate: float = 1.0,
        min_score: float = 0.0,
        min_margin: float = 0.0,
        lexicons: bool = True,
        sources: Sequence[str] = (),
        guessed_labels_review: bool = False,
    ):
        """``calibrators``: decision source -> its calibrator. A field decided by a source without one has the raw
        extractor score x mean recognition probability as confidence, and its document the review reason
        ``uncalibrated:<source>``: it never goes straight through. A field not found takes the highest P(really
        absent | that source found none) among the calibrators of ``sources`` (the extractors that ran; default:
        every calibrator given): a value really absent is missed by every source, so P(really absent | all of
        them found none) is at least each of those. With no calibrator among them it is ``uncalibrated:<source>``.
        ``max_error_rate`` is the document risk target (routing.py). ``lexicons`` re-reads names and addresses
        against the surname and division lexicons, and the two names of one person (the same ID number) as one
        name (same_person.py). ``guessed_labels_review``: a value the rules decided by guessing what a label
        outside their lexicon names goes to review (``weak_evidence``), where the rules' output is the document's
        (routing.py ``evidence_reasons``)."""
        self.chars = chars
        self.threshold = confidence_threshold
        self.required = tuple(required)
        self.redecode = redecode
        self.calibrators = dict(calibrators or {})
        self.sources = tuple(sources) or tuple(self.calibrators)
        self.max_error_rate = max_error_rate
        self.min_score = min_score
        self.min_margin = min_margin
        self.lexicons = lexicons
        self.guessed_labels_review = guessed_labels_review
        self._allowed = {k: chars.encode_charset(s.charset) for k, s in FIELDS.items() if s.charset}

    # -- one field --------------------------------------------------------------------------------
    def decide(self, cand: Proposal, lines: Sequence[Sequence[TextLine]], today: date) -> Decision:
        spec = FIELDS[cand.key]
        norm = read_value(cand, today)
        if self.lexicons and norm.valid:
            better = reread(cand.key, cand.text, cand.chars, lines, self.chars)
            if better is not None:
                alt = spec.normalizer(better[0], today)
                if alt.value != norm.value:
                    return Decision(replace(cand, text=better[0], chars=better[1], normalized=alt), alt,
                                    redecoded_from=cand.text)
        if norm.valid or not self.redecode or cand.key not in self._allowed:
            return Decision(cand, norm, redecoded_from=cand.read_as)
        pages = {p for p, _, _ in cand.chars}
        line_ids = {(p, li) for p, li, _ in cand.chars}
        if len(pages) != 1 or len(line_ids) != 1:
            return Decision(cand, norm)
        (p, li), = line_ids
        line = lines[p][li]
        cis = [ci for _, _, ci in cand.chars]
        for text in redecode_candidates(line, min(cis), max(cis), self._allowed[cand.key], self.chars):
            if spec.kind in _SAME_LENGTH and _value_chars(text) != _value_chars(cand.text):
                continue
            alt = spec.normalizer(text, today)
            if alt.valid:
                if alt.value != norm.value:
                    return Decision(replace(cand, text=text, normalized=alt), alt, redecoded_from=cand.text)
                break
        return Decision(cand, norm)

    # -- geometry and confidence --------------------------------------------------------------------
    @staticmethod
    def polygon(cand: Proposal, lines: Sequence[Sequence[TextLine]]) -> Optional[list[list[float]]]:
        quads, boxes = [], {}
        for p, li, ci in cand.chars:
            if (p, li) not in boxes:  # one line's boxes, computed once for all its characters
                boxes[(p, li)] = lines[p][li].char_boxes()
            if ci < len(boxes[(p, li)]):
                quads.append(boxes[(p, li)][ci])
        if not quads:
            return None
        first, last = quads[0], quads[-1]
        same_line = len({(p, li) for p, li, _ in cand.chars}) == 1
        if same_line:  # follows the line's skew: left edge of the first char, right edge of the last
            return polygon_json(np.stack([first[0], last[1], last[2], first[3]]))
        pts = np.concatenate(quads)
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        return polygon_json(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))

    def choose(self, cands: Sequence[Proposal], lines: Sequence[Sequence[TextLine]], today: date) -> Optional[Decision]:
        """The first proposal (in preference order) whose value validates, after re-decoding; else the first."""
        first = None
        for c in cands:
            d = self.decide(c, lines, today)
            if d.normalized.valid:
                return d
            first = first or d
        return first

    # -- the document -------------------------------------------------------------------------------
    def evidence(
        self, d: Decision, cands: Sequence[Proposal], issues: Sequence[str], lines: Sequence[Sequence[TextLine]],
        today: date,
    ) -> FieldEvidence:
        c = d.proposal
        others = [o for o in cands if o.method != c.method]
        agree = None
        if others:
            agree = read_value(others[0], today).value == d.normalized.value
        return gather(
            c.key, c.method, c.how, c.prob, c.chars, lines, d.normalized.value is not None and not issues,
            len(issues), d.redecoded_from is not None, c.rivals, c.margin, len(cands), agree,
        )

    def confidence(self, ev: FieldEvidence) -> tuple[float, Optional[str]]:
        """The field's confidence and the source whose calibrator gave it (None: uncalibrated, raw score)."""
        cal = self.calibrators.get(ev.source)
        if cal is None:
            return ev.score * ev.rec_mean, None
        return cal.confidence(ev), ev.source

    def absent_ok(self, key: str) -> Optional[float]:
        """P(``key`` really absent | no extractor that ran found it), or None when none of them is calibrated."""
        known = [self.calibrators[s].absent_ok(key) for s in self.sources if s in self.calibrators]
        return max(known) if known else None

    # -- the document -------------------------------------------------------------------------------
    def decisions(self, candidates: dict[str, Sequence[Proposal]], lines: Sequence[Sequence[TextLine]],
                  today: date) -> dict[str, Optional[Decision]]:
        """The decision per field (normalization, lexicon re-reading, re-decoding); no calibrator enters it."""
        decisions = {k: self.choose(cands, lines, today) for k, cands in candidates.items()}
        if self.lexicons:  # one ID number, one person: the two names read as one (same_person.py)
            decisions = same_person(decisions, lines, self.chars, today)
        return decisions

    def assemble(
        self, candidates: dict[str, Sequence[Proposal]], lines: Sequence[Sequence[TextLine]], today: date,
        flag_disagreement: Optional[Collection[str]] = None,
        decisions: Optional[dict[str, Optional[Decision]]] = None,
    ) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        """Fields, review reasons, diagnostics. Where the extractors disagree on a field in
        ``flag_disagreement`` (default: every field), ``extractors_disagree:<field>`` is a review reason.
        ``decisions``: those :meth:`decisions` returned for the same candidates and lines (an assembler of the same
        settings with other calibrators reuses them)."""
        if decisions is None:
            decisions = self.decisions(candidates, lines, today)
        values = {k: (d.normalized.value if d else None) for k, d in decisions.items()}
        cross = validate_fields(values, today)
        fields: dict[str, Any] = {}
        redecoded: dict[str, Any] = {}
        evidence: dict[str, Any] = {}
        found: dict[str, float] = {}
        absent: dict[str, float] = {}
        found_evidence: dict[str, FieldEvidence] = {}
        invalid: list[str] = []
        disagree: list[str] = []
        uncalibrated: list[str] = []  # decision sources of this document without a calibrator
        calibration: dict[str, Optional[str]] = {}
        for key in FIELDS:
            d = decisions.get(key)
            if d is None or d.normalized.value is None and not d.proposal.text:
                fields[key] = None
                ok = self.absent_ok(key)
                absent[key] = 1.0 if ok is None else ok
                if ok is None:
                    uncalibrated += [s for s in self.sources if s not in uncalibrated]
                continue
            lexical = lexicon_issues(key, d.normalized.value) if self.lexicons else ()
            issues = tuple(dict.fromkeys(d.normalized.issues + cross.get(key, ()) + lexical))
            ev = self.evidence(d, candidates.get(key, ()), issues, lines, today)
            evidence[key] = ev.as_dict()
            found_evidence[key] = ev
            conf, used = self.confidence(ev)
            conf = round(conf, 4)
            calibration[key] = used
            if used is None and ev.source not in uncalibrated:
                uncalibrated.append(ev.source)
            page = d.proposal.chars[0][0] if d.proposal.chars else 0
            fields[key] = {
                "value": d.normalized.value,
                "text": d.proposal.text,
                "confidence": conf,
                "page": page,
                "polygon": self.polygon(d.proposal, lines),
                "valid": d.normalized.value is not None and not defects(issues),
                "issues": list(issues),
            }
            found[key] = conf
            if not fields[key]["valid"]:
                invalid.append(key)
            if ev.agree is False and (flag_disagreement is None or key in flag_disagreement):
                disagree.append(key)
            if d.redecoded_from is not None:
                before = FIELDS[key].normalizer(d.redecoded_from, today).value
                redecoded[key] = {"before_text": d.redecoded_from, "before": before, "after": d.normalized.value}
        routing = route(
            found, absent, self.required, invalid, self.max_error_rate, self.threshold,
            extra_hard=uncalibrated_reasons(uncalibrated) + [f"{EXTRACTORS_DISAGREE}:{k}" for k in disagree]
            + evidence_reasons(found_evidence, self.min_score, self.min_margin, self.guessed_labels_review)
            + _line_end_reasons(fields, decisions, lines)
            + [f"{READERS_DISAGREE}:{k}" for k in CHECKED if fields.get(k) is not None
               and _readers_disagree(decisions[k], lines, k in WHOLE_RUNS)],
        )
        diagnostics = {
            "redecoded": redecoded,
            "methods": {k: d.proposal.method for k, d in decisions.items() if d is not None},
            "calibration": calibration,  # field -> the source whose calibrator gave its confidence; None: raw score
            "evidence": evidence,
            "absent_ok": {k: round(v, 6) for k, v in absent.items()},
            "routing": routing.as_dict(),
        }
        return fields, list(routing.reasons), diagnostics


def _readers_disagree(d: Decision, lines: Sequence[Sequence[TextLine]], whole_run: bool = False) -> bool:
    """Whether the check head reads the value, or the value as first read (before a re-reading that may have taken
    the check head's characters), otherwise: a name the two heads disagreed on goes to review either way.
    ``whole_run``: a code, compared with the whole run of letters and digits that holds it in the check reading."""
    checked = check_reading(d.proposal.chars, lines, whole_run)
    return any(disagrees(text, checked) for text in (d.proposal.text, d.redecoded_from) if text is not None)


def _line_end_reasons(fields: Mapping[str, Any], decisions: Mapping[str, Optional[Decision]],
                      lines: Sequence[Sequence[TextLine]]) -> list[str]:
    """Hard reasons for found values whose line's end may have lost text: ``may_continue`` where a line wrap may
    have cut one (stages/extraction/wrap.py), then ``may_be_cut`` where its box holds unread room
    (stages/extraction/line_end.py)."""
    found = {k: d for k, d in decisions.items() if d is not None and fields.get(k) is not None}
    wrapped = []
    for key in MAY_WRAP:
        if key not in found:
            continue
        claimed = [f["text"] for k, f in fields.items() if f is not None and k != key and f.get("text")]
        if continuation_below(found[key].proposal.chars, lines, claimed) is not None:
            wrapped.append(f"{MAY_CONTINUE}:{key}")
    texts = {k: f.get("text") for k, f in fields.items() if f is not None}
    boxes: dict = {}  # per page, its deskewed boxes (rules.lines.page_boxes), computed once
    return wrapped + [f"{MAY_BE_CUT}:{k}" for k, d in found.items()
                      if may_be_cut(d.proposal.chars, lines, [t for o, t in texts.items() if o != k and t], boxes)]
