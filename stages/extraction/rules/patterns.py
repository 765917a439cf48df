"""Strategy 3, patterns: field-shaped text without a label (valid 18-character IDs near 投保人/被保险人, mobiles,
dated lines, company and product names)."""
from __future__ import annotations

import re

from stages.extraction.rules.candidates import (
    SCORE_PATTERN,
    UNSURE_ID,
    RuleCandidate,
    retarget,
    span_candidate,
    text_candidate,
)
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.lexicon import DISTRACTOR_WORDS, ROLE_FIELDS, LabelDef
from stages.extraction.rules.lines import comp_pos, raw_refs, raw_text
from stages.extraction.rules.occurrences import LabelHit
from stages.extraction.rules.roles import resolve_role
from stages.extraction.strategies import PATTERN
from stages.postprocess.values import date_spans

_ID_PATTERN = re.compile(r"(?<![0-9A-Za-z])\d(?: ?\d){16} ?[\dXx](?![0-9A-Za-z])")
_MOBILE_PATTERN = re.compile(r"(?<![\d])(?:\+?86[\s-]?)?1[3-9]\d(?:[\s-]?\d){8}(?!\d)")
_INSURER_PATTERN = re.compile(
    r"[\u4e00-\u9fff()]{2,24}?(?:保险|人寿|财产|养老|健康)[\u4e00-\u9fff()]{0,16}?"
    r"(?:股份有限公司|有限责任公司|有限公司|保险公司|(?:有限|责任|保险)公$)")  # 司 lost at the line's end
_PRODUCT_PATTERN = re.compile(r"^[\u4e00-\u9fffA-Za-z0-9()·]{2,30}?(?:保险|寿险|险)(?:\([\u4e00-\u9fff]{1,10}\))?$")
_DATE_CONTEXT: dict[str, tuple[str, ...]] = {
    "effective_date": ("生效", "起保", "起期"),
    "expiry_date": ("满期", "到期", "终止", "止期", "期满"),
    "issue_date": ("签单", "签发", "出单"),
}


def pattern_candidates(doc: PreparedDocument) -> list[RuleCandidate]:
    """Candidates from field-shaped text: valid IDs by role, mobiles, dates beside date words, companies, products."""
    out: list[RuleCandidate] = []
    unknown_ids: list[tuple[int, int, int]] = []
    for li in doc.order:
        line = doc.lines[li]
        for m in _ID_PATTERN.finditer(line.norm):
            cs, ce = comp_pos(line, m.start()), comp_pos(line, m.end())
            probe = LabelHit(li, cs, cs, LabelDef("", "attr", attr="id"), True, cs)
            role, _ = resolve_role(doc, probe)
            if role in ("policyholder", "insured"):
                key = ROLE_FIELDS[(role, "id")]
                c = span_candidate(doc, key, li, cs, ce, PATTERN, SCORE_PATTERN)
                if c is not None:
                    out.append(c)
            elif role is None:
                unknown_ids.append((li, cs, ce))
        if not any(w in line.comp for w in DISTRACTOR_WORDS):
            for m in _MOBILE_PATTERN.finditer(line.norm):
                cs = comp_pos(line, m.start())
                probe = LabelHit(li, cs, cs, LabelDef("", "attr", attr="phone"), True, cs)
                if resolve_role(doc, probe)[0] in ("policyholder", None):
                    c = text_candidate(doc, "policyholder_phone", raw_text(line, m.start(), m.end()),
                                       raw_refs(line, m.start(), m.end()), (li,),
                                       PATTERN, SCORE_PATTERN)
                    if c is not None:
                        out.append(c)
        for key, words in _DATE_CONTEXT.items():
            if any(w in line.comp for w in words):
                spans = date_spans(line.norm)
                if len(spans) == 1:
                    s, e = spans[0]
                    c = text_candidate(doc, key, raw_text(line, s, e), raw_refs(line, s, e), (li,), PATTERN,
                                       SCORE_PATTERN)
                    if c is not None:
                        out.append(c)
    for li, s, e in unknown_ids:
        c = span_candidate(doc, "policyholder_id_number", li, s, e, PATTERN, SCORE_PATTERN * 0.8)
        if c is not None:
            out.append(retarget(c, UNSURE_ID))
    out.extend(_company_and_product(doc))
    return out


def _company_and_product(doc: PreparedDocument) -> list[RuleCandidate]:
    """Company names (the insurer, earlier lines first) and lines that are nothing but a product name."""
    out: list[RuleCandidate] = []
    for r, li in enumerate(doc.order):
        comp = doc.lines[li].comp
        if any(w in comp for w in ("地址", "电话", "热线", "本公司", "以下简称")):
            continue
        m = _INSURER_PATTERN.search(comp)
        if m is not None:
            c = span_candidate(doc, "insurer", li, m.start(), m.end(), PATTERN,
                               SCORE_PATTERN * (1.0 - 0.01 * min(r, 30)))
            if c is not None:
                out.append(c)
        if (_PRODUCT_PATTERN.match(comp) and len(comp) >= 5 and not comp.endswith("财险")
                and not any(w in comp for w in ("公司", "保险单", "保单", "条款", "须知", "声明", "投保单", "合同"))):
            c = span_candidate(doc, "product_name", li, 0, len(comp), PATTERN,
                               SCORE_PATTERN * 0.8)
            if c is not None:
                out.append(c)
    return out
