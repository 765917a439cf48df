"""One document's rule decision: its lines as the rules read them (labels re-read against the lexicon where
configured), decided once for the rules' own fields and for the learned decision's rule candidates alike."""
from __future__ import annotations

from datetime import date
from typing import Optional, Sequence

from stages.contracts.types import TextLine
from stages.extraction.label_reread import label_index, reread_labels
from stages.extraction.rules.extract import RulesDecision, decide_rules
from stages.extraction.rules.lexicon import Lexicon
from stages.extraction.rules.records import rule_lines
from stages.recognition.ctc import CharDict


def rules_decision(flat: Sequence[tuple[int, int, TextLine]], today: date, lexicon: Lexicon,
                   chars: Optional[CharDict] = None) -> RulesDecision:
    """The rule decision over a document's lines ``(page, line index, line)``; with ``chars``, label lines are
    re-read against the lexicon first (``extraction.label_reread``)."""
    texts = [ln.text for _, _, ln in flat]
    if chars is not None:
        index = label_index(lexicon)
        texts = [reread_labels(ln, index, chars) for _, _, ln in flat]
    return decide_rules(rule_lines(flat, texts), today, lexicon)
