"""One document's rule decision: made once over the lines as the rules read them, it gives both the rules' own
fields and every candidate the strategies considered."""
from __future__ import annotations

from datetime import date

from stages.extraction.rule_decision import rules_decision
from stages.extraction.rules import extract_rules
from stages.extraction.rules.extract import considered, winners
from stages.extraction.rules.lexicon import FULL_LEXICON, build_lexicon
from stages.extraction.rules.records import rule_lines
from tests.stages.extraction.learned.helpers import line

TODAY = date(2026, 6, 1)
PAGES = [[line("保险单号：AB12345678", 40, 40), line("投保人：张伟", 40, 80)],
         [line("被保险人：李娜", 40, 40), line("保险费：1,200.00元", 40, 80),
          line("生效日期：2024年3月1日", 40, 120)]]
FLAT = [(pi, li, ln) for pi, page in enumerate(PAGES) for li, ln in enumerate(page)]


def test_the_decision_gives_the_rules_winners_and_more_candidates() -> None:
    decision = rules_decision(FLAT, TODAY, FULL_LEXICON)
    assert winners(decision) == extract_rules(rule_lines(FLAT, [ln.text for _, _, ln in FLAT]), TODAY)
    found = {k: m.value for k, m in winners(decision).items() if m is not None}
    assert found["insured_name"] == "李娜" and found["premium"] == "1200.00"
    assert {(k, v) for k, v in found.items()} <= {(c.key, c.match.value) for c in considered(decision)}


def test_rule_lines_keep_each_lines_page_and_take_the_given_text() -> None:
    lines = rule_lines(FLAT, ["投保人：王五" if i == 1 else ln.text for i, (_, _, ln) in enumerate(FLAT)])
    assert [ln.page for ln in lines] == [0, 0, 1, 1, 1]
    assert lines[1].text == "投保人：王五" and lines[1].char_u == FLAT[1][2].char_u


def test_the_decision_reads_with_the_lexicon_it_is_given() -> None:
    without = winners(rules_decision(FLAT, TODAY, build_lexicon(["保险费"])))  # the premium's wording withheld
    full = winners(rules_decision(FLAT, TODAY, FULL_LEXICON))
    assert full["premium"].method == "label"
    assert without["premium"] is None or without["premium"].method != "label"
