"""The rules extractor's entry point: every strategy's candidates, conflicts settled, the best one per field."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Iterable, Mapping, Optional, Sequence

from stages.extraction.field_specs import FIELD_KEYS, FIELDS
from stages.extraction.rules.bare_amounts import bare_amount_candidates
from stages.extraction.rules.candidates import UNSURE_ID, RuleCandidate, retarget
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.labels import label_candidates
from stages.extraction.rules.lexicon import FULL_LEXICON, Lexicon
from stages.extraction.rules.narrative import join_lines, narrative_candidates
from stages.extraction.rules.patterns import pattern_candidates
from stages.extraction.rules.records import OcrLineLike, RuleMatch
from stages.extraction.rules.role_tables import role_table_candidates
from stages.extraction.rules.unknown_labels import unknown_label_candidates
from stages.extraction.strategies import COPY_OF_POLICYHOLDER, NARRATIVE, PATTERN


def _drop_contradicted(cands: list[RuleCandidate]) -> list[RuleCandidate]:
    """A sentence that says whose ID/name a span is (``以李四（身份证号码：…）为被保险人``) overrules a role guessed
    from context for the same span."""
    claims: dict[tuple[tuple[int, ...], Optional[str]], str] = {}
    for c in cands:
        if c.match.method == NARRATIVE and FIELDS[c.key].kind in ("id_number", "name"):
            claims[(c.match.line_indices, c.match.value)] = c.key
    out = []
    for c in cands:
        owner = claims.get((c.match.line_indices, c.match.value))
        if owner is not None and owner != c.key and c.match.method != NARRATIVE and c.key != UNSURE_ID:
            continue
        out.append(c)
    return out


def _best(cands: Iterable[RuleCandidate]) -> dict[str, RuleCandidate]:
    """The highest-scored candidate per key (the earlier one in reading order on a tie)."""
    best: dict[str, RuleCandidate] = {}
    for c in cands:
        cur = best.get(c.key)
        if cur is None or (c.score, -c.order) > (cur.score, -cur.order):
            best[c.key] = c
    return best


@dataclass(frozen=True)
class RulesDecision:
    """One document's rule decision: every strategy's candidates and the best one per field. The rules' own
    fields (:func:`winners`) and the learned decision's rule candidates (:func:`considered`) both read it, so a
    document is decided once."""

    candidates: tuple[RuleCandidate, ...]
    best: Mapping[str, RuleCandidate]


def decide_rules(lines: Sequence[OcrLineLike], today: date, lexicon: Lexicon = FULL_LEXICON) -> RulesDecision:
    """Every strategy's candidates over one document's OCR lines and the best one per field.

    ``lines`` may come from several pages (``page`` attribute); line indices in the result refer to ``lines``."""
    cands, best = _decide(PreparedDocument(lines, today, lexicon))
    return RulesDecision(tuple(cands), best)


def winners(decision: RulesDecision) -> dict[str, Optional[RuleMatch]]:
    """Every field key of :data:`stages.extraction.field_specs.FIELDS` in registry order: its best match with its
    rivals counted, or ``None`` where nothing plausible was found."""
    best, cands = decision.best, decision.candidates
    return {key: (_with_rivals(best[key], cands) if key in best else None) for key in FIELD_KEYS}


def considered(decision: RulesDecision) -> list[RuleCandidate]:
    """Every candidate the strategies considered (not only each field's winner), an ID of unknown owner offered
    for both persons' ID fields; what the learned decision (``stages/extraction/learned``) scores."""
    cands, best = decision.candidates, decision.best
    out = [c for c in cands if c.key != UNSURE_ID]
    for c in cands:
        if c.key == UNSURE_ID:
            out += [retarget(c, "policyholder_id_number"), retarget(c, "insured_id_number")]
    seen = {id(c) for c in out}
    out += [c for c in best.values() if id(c) not in seen]  # same-as-policyholder copies
    return out


def extract_rules(lines: Sequence[OcrLineLike], today: date,
                  lexicon: Lexicon = FULL_LEXICON) -> dict[str, Optional[RuleMatch]]:
    """Find every field of :data:`stages.extraction.field_specs.FIELDS` in one document's OCR lines
    (:func:`winners` of :func:`decide_rules`)."""
    return winners(decide_rules(lines, today, lexicon))


def _decide(doc: PreparedDocument) -> tuple[list[RuleCandidate], dict[str, RuleCandidate]]:
    """Every strategy's candidates and the best one per field."""
    label_cands, same_as = label_candidates(doc)
    cands = label_cands + role_table_candidates(doc) + narrative_candidates(doc, join_lines(doc))
    cands += pattern_candidates(doc)
    cands = _drop_contradicted(cands)
    labelled = _best(c for c in cands if c.key != UNSURE_ID and c.match.method != PATTERN)
    cands += unknown_label_candidates(doc, labelled)
    best = _best(c for c in cands if c.key != UNSURE_ID)
    # amounts whose labels were lost, by premium < sum insured
    bare = bare_amount_candidates(doc, best)
    best.update((c.key, c) for c in bare)
    cands += bare
    for key in sorted(same_as):
        source = best.get(key.replace("insured", "policyholder"))
        if key not in best and source is not None:
            m = source.match
            best[key] = RuleCandidate(key, source.score * 0.95, source.order,
                                  RuleMatch(key, m.text, m.line_indices, round(m.score * 0.95, 4),
                                            COPY_OF_POLICYHOLDER, m.normalized, chars=m.chars))
    return cands, best


def _with_rivals(chosen: RuleCandidate, cands: Sequence[RuleCandidate]) -> RuleMatch:
    """The chosen match with the number of candidates for its key that carry another value, and the score margin."""
    others = [c.score for c in cands if c.key == chosen.key and c.match.value != chosen.match.value]
    margin = chosen.score - max(others) if others else 1.0
    return replace(chosen.match, rivals=len(others), margin=round(margin, 4))
