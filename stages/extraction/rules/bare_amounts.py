"""Amounts whose labels were lost: the sum insured and the premium read from bare currency amounts.

A fax can lose a label to a dark band or to broken strokes (保险金额 gone, ``¥1,630,000.00`` still there). When no
strategy found the sum insured or the premium, the boxes that hold nothing but a currency amount and that no found
field took fill them, by the one relation every policy keeps: the premium is smaller than the sum insured.

* Neither found, exactly two such amounts with different values: the larger is the sum insured, the smaller the
  premium.
* One found: the one such amount on the right side of it (larger than a found premium, smaller than a found sum
  insured) fills the other.

Anything else (one bare amount and neither field, three or more) stays unfilled. The score is below every
labelled strategy's, so a label always wins, and the method is ``pattern``, as for the other unlabelled values.
"""
from __future__ import annotations

import re
from decimal import Decimal
from typing import Optional

from stages.extraction.rules.candidates import SCORE_PATTERN, RuleCandidate, retarget, text_candidate
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.lines import raw_refs
from stages.extraction.strategies import PATTERN
from stages.postprocess.values import CAPITAL_NUMERALS

SCORE_BARE_AMOUNT = SCORE_PATTERN * 0.8
_AMOUNT_ONLY = set("0123456789,.") | set(CAPITAL_NUMERALS) | set("人民币RMB¥￥()（）:：大写")
_CURRENCY_RE = re.compile(r"人民币|RMB|[¥￥元圆]")
_DIGIT_RE = re.compile(r"\d")


def bare_amount_candidates(doc: PreparedDocument, best: dict[str, RuleCandidate]) -> list[RuleCandidate]:
    """Candidates for whichever of ``sum_insured`` and ``premium`` is missing from ``best`` (see the module)."""
    have_sum, have_premium = best.get("sum_insured"), best.get("premium")
    if have_sum is not None and have_premium is not None:
        return []
    taken = {li for c in best.values() for li in c.match.line_indices}
    bare: dict[Decimal, RuleCandidate] = {}  # value -> its first bare box, read as a sum insured
    for li in doc.order:
        line = doc.lines[li]
        if doc.source[li] in taken or not _is_bare_amount(line.comp):
            continue
        c = text_candidate(doc, "sum_insured", line.raw, raw_refs(line, 0, len(line.norm)), (li,), PATTERN,
                           SCORE_BARE_AMOUNT)
        if c is not None and c.match.value is not None and c.match.normalized.valid:
            bare.setdefault(Decimal(c.match.value), c)
    if have_sum is None and have_premium is None:
        if len(bare) != 2:
            return []
        small, large = sorted(bare)
        return [bare[large], retarget(bare[small], "premium")]
    if have_sum is None:
        assert have_premium is not None
        found = _value(have_premium)
        side = [c for v, c in bare.items() if found is not None and v > found]
        return side if len(side) == 1 else []
    found = _value(have_sum)
    side = [retarget(c, "premium") for v, c in bare.items() if found is not None and v < found]
    return side if len(side) == 1 else []


def _is_bare_amount(comp: str) -> bool:
    return (bool(comp) and set(comp) <= _AMOUNT_ONLY and bool(_CURRENCY_RE.search(comp))
            and bool(_DIGIT_RE.search(comp) or set(comp) & set("壹贰叁肆伍陆柒捌玖")))


def _value(c: RuleCandidate) -> Optional[Decimal]:
    return Decimal(c.match.value) if c.match.value is not None else None
