"""Candidates carry their character references; the rule strategies offer every candidate they considered."""
from __future__ import annotations

from datetime import date

from stages.extraction.learned.candidates import DocLines, merge, rule_candidates
from stages.extraction.rules import extract_rules
from stages.extraction.rules.extract import decide_rules
from stages.extraction.rules.lexicon import FULL_LEXICON
from stages.extraction.rules.records import rule_lines
from tests.stages.extraction.learned.helpers import line

TODAY = date(2026, 6, 1)


class _Line:
    def __init__(self, ln):
        self.text, self.polygon, self.page = ln.text, ln.polygon, 0


def _doc():
    lines = [line("保险单号：AB12345678", 40, 40), line("投保人：张伟", 40, 80), line("被保险人：李娜", 40, 120),
             line("生效日期：2024年3月1日", 40, 160), line("签发日期：2024年2月20日", 40, 200)]
    return DocLines.build([lines], [(1000.0, 1400.0)])


def _decision(doc: DocLines):
    return decide_rules(rule_lines(doc.flat, [ln.text for _, _, ln in doc.flat]), TODAY, FULL_LEXICON)


def test_rule_candidates_point_at_their_characters() -> None:
    doc = _doc()
    cands = rule_candidates(doc, _decision(doc))
    by_key = {c.key: c for c in cands if c.strategy == "label"}
    c = by_key["insured_name"]
    assert c.value == "李娜" and c.source == "rules"
    assert "".join(doc.line(r).text[r[2]] for r in c.chars) == "李娜"
    assert by_key["effective_date"].value == "2024-03-01"


def test_rules_offer_more_than_their_winners() -> None:
    doc = _doc()
    cands = rule_candidates(doc, _decision(doc))
    winners = {k: m for k, m in extract_rules([_Line(ln) for _, _, ln in doc.flat], TODAY).items() if m}
    assert len(cands) > len(winners)
    assert {(k, m.value) for k, m in winners.items()} <= {(c.key, c.value) for c in cands}


def test_merge_keeps_one_of_exact_repeats() -> None:
    doc = _doc()
    cands = rule_candidates(doc, _decision(doc))
    assert len(merge(cands + cands)) == len(merge(cands))
