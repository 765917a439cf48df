"""Strategy 2, narrative: sentences read over the text of all lines joined in reading order
(``兹有投保人张三（身份证号码：…）以李四为被保险人``, ``自…零时起至…二十四时止``), and labels split by a line wrap."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from stages.extraction.rules.candidates import (
    SCORE_NARRATIVE,
    SCORE_SPLIT_LABEL,
    UNSURE_ID,
    RuleCandidate,
    segments_candidate,
)
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.labels import hit_fields
from stages.extraction.rules.lines import PUNCT
from stages.extraction.rules.occurrences import LabelHit, skip_connectors
from stages.extraction.strategies import NARRATIVE
from stages.postprocess.values import date_spans

_NAME_PAT = r"[\u4e00-\u9fff·]{2,6}?"
_ID_LABEL_PAT = r"(?:身份证号码|身份证号|身份证件号码|身份证|证件号码|证件号)"
# (身份证号码：…) / (被保险人证件号码：…): a short label ending in an ID word; the closing bracket may be read as a
# colon right after the number (…224769：为被保险人)
_ID_IN_PARENS = (rf"\((?:[\u4e00-\u9fff]{{0,4}}?{_ID_LABEL_PAT}):?"
                 rf"(?P<id>[0-9XxOoDlI|]{{17,18}})(?:(?=[,;)])[^()]*\)|:(?=为|以|向))")
# the sentence's next clause when the comma after a product name was lost (…重大疾病保险保额为¥…)
_AMOUNT_LABEL_PAT = r"(?:基本保险金额|保险金额|基本保额|保额|首期保险费|保险费|保费)为"
_NARRATIVE_PATTERNS: dict[str, re.Pattern[str]] = {
    "policyholder": re.compile(
        rf"投保人(?P<name>{_NAME_PAT})(?:{_ID_IN_PARENS})?"
        r"(?=以|为|向|,|;|。|于|就|已|作为|与|在|同意|自愿|申请|\()"),
    "insured": re.compile(rf"以(?P<name>{_NAME_PAT})(?:{_ID_IN_PARENS})?为被保险人"),
    "product": re.compile(
        r"(?:向[^,;。\x00]{0,30}?|在(?:本公司|我公司|本司|我司)?)投保(?!人)(?:了)?"  # 向<any insurer>投保
        r"(?P<name>[\u4e00-\u9fffA-Za-z0-9()·]{2,30}?(?:保险|险)"
        r"(?:\([\u4e00-\u9fff0-9]{1,10}\))?(?:[A-Z]款)?)(?=[,;。\x00]|$|" + _AMOUNT_LABEL_PAT + ")"),
    "product_quoted": re.compile(r"投保(?:了)?[《(](?P<name>[^《》,;。]{2,40})》"),  # OCR may read 《 as (
    "beneficiary": re.compile(rf"受益人(?:为|是)(?P<name>法定继承人|法定受益人|法定|{_NAME_PAT})(?=[,;。(\x00]|$)"),
    "beneficiary_named": re.compile(
        rf"指定(?P<name>法定继承人|法定受益人|法定|{_NAME_PAT})为(?:身故)?(?:保险金)?受益人"),
}
_NARRATIVE_FIELDS: dict[str, tuple[str, Optional[str]]] = {
    "policyholder": ("policyholder_name", "policyholder_id_number"),
    "insured": ("insured_name", "insured_id_number"),
    "beneficiary": ("beneficiary_name", None),
    "beneficiary_named": ("beneficiary_name", None),
    "product": ("product_name", None),
    "product_quoted": ("product_name", None),
}
_BETWEEN_DATES_RE = re.compile(r"^(?:零时|0时|00:00|零点|0点|起|\(含\)|含)*(?:至|到|~|-|—|起至)$")
_AFTER_START_RE = re.compile(r"^(?:零时|0时|00:00|零点|0点)?起")
_AFTER_END_RE = re.compile(r"^(?:二十四时|24时|24:00|二十四点|24点)?止")


@dataclass(frozen=True)
class JoinedText:
    """The text of all lines in reading order, with the line and compact position of every character."""

    text: str
    line_of: tuple[int, ...]  # per character: prepared line index
    pos_of: tuple[int, ...]  # per character: compact position in that line


_BREAK = "\x00"  # between lines that are not one wrapped paragraph: nothing matches across it


def join_lines(doc: PreparedDocument) -> JoinedText:
    """All lines in reading order; wrapped paragraph lines run on, other lines are separated by :data:`_BREAK`."""
    text: list[str] = []
    line_of: list[int] = []
    pos_of: list[int] = []
    prev: Optional[int] = None
    for li in doc.order:
        if prev is not None:
            nxt = doc.next_in_paragraph(prev, joiners=False)
            if nxt is None or nxt.index != li:
                text.append(_BREAK)
                line_of.append(-1)
                pos_of.append(-1)
        comp = doc.lines[li].comp
        text.append(comp)
        line_of.extend([li] * len(comp))
        pos_of.extend(range(len(comp)))
        prev = li
    return JoinedText("".join(text), tuple(line_of), tuple(pos_of))


def _joined_candidate(doc: PreparedDocument, j: JoinedText, key: str, s: int, e: int,
                      base: float) -> Optional[RuleCandidate]:
    """A candidate from joined-text span ``[s, e)`` (which may cross lines)."""
    segments: list[tuple[int, int, int]] = []
    brk = j.text.find(_BREAK, s, e)
    e = e if brk < 0 else brk
    i = s
    while i < e:
        li = j.line_of[i]
        k = i
        while k < e and j.line_of[k] == li:
            k += 1
        segments.append((li, j.pos_of[i], j.pos_of[k - 1] + 1))
        i = k
    return segments_candidate(doc, key, tuple(segments), NARRATIVE, base) if segments else None


def _split_label_candidates(doc: PreparedDocument, j: JoinedText) -> list[RuleCandidate]:
    """Labels broken across the lines of a wrapped paragraph (``…，保`` / ``险金额为人民币…``), and field labels that
    end a paragraph line whose next line opens with their value (``…本保险单签发日期`` / ``为2019/4/12。…``)."""
    out: list[RuleCandidate] = []
    matches = list(doc.lexicon.pattern.finditer(j.text))
    for n, m in enumerate(matches):
        s, e = m.span()
        label = doc.lexicon.labels[m.group()]
        split = j.line_of[s] != j.line_of[e - 1]
        ends_line = not split and e < len(j.text) and j.line_of[e] not in (j.line_of[s], -1)
        if not (split or (ends_line and label.kind != "attr")) or label.kind not in ("field", "period", "attr"):
            continue
        value_start, separated = skip_connectors(j.text, e)
        if not separated and not (s > 0 and j.text[s - 1] in PUNCT):
            continue
        end = matches[n + 1].start() if n + 1 < len(matches) else len(j.text)
        fields = label.fields
        if label.kind == "attr":
            probe = LabelHit(j.line_of[s], j.pos_of[s], j.pos_of[s], label, True, j.pos_of[s])
            fields = tuple(k for k in hit_fields(doc, probe)[0] if k != UNSURE_ID)
        for key in fields:
            if label.kind == "period":
                spans = date_spans(j.text[value_start:end])
                for k, (a, b) in zip(label.fields, spans[:2]):
                    c = _joined_candidate(doc, j, k, value_start + a, value_start + b, SCORE_SPLIT_LABEL)
                    if c is not None:
                        out.append(c)
                break
            c = _joined_candidate(doc, j, key, value_start, end, SCORE_SPLIT_LABEL)
            if c is not None:
                out.append(c)
    return out


def narrative_candidates(doc: PreparedDocument, j: JoinedText) -> list[RuleCandidate]:
    """Candidates from sentences (names, IDs, products, beneficiaries, periods) and from labels split by a wrap."""
    out: list[RuleCandidate] = _split_label_candidates(doc, j)
    for role, pattern in _NARRATIVE_PATTERNS.items():
        name_key, id_key = _NARRATIVE_FIELDS[role]
        for m in pattern.finditer(j.text):
            for key, group in ((name_key, "name"), (id_key, "id")):
                if key is None or m.group(group) is None:
                    continue
                c = _joined_candidate(doc, j, key, m.start(group), m.end(group), SCORE_NARRATIVE)
                if c is not None:
                    out.append(c)
    spans = date_spans(j.text)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        if _BETWEEN_DATES_RE.match(j.text[e1:s2]):
            for key, (s, e) in (("effective_date", (s1, e1)), ("expiry_date", (s2, e2))):
                c = _joined_candidate(doc, j, key, s, e, SCORE_NARRATIVE - 0.15)
                if c is not None:
                    out.append(c)
    for s, e in spans:
        tail = j.text[e:e + 8]
        key = ("effective_date" if _AFTER_START_RE.match(tail) else
               "expiry_date" if _AFTER_END_RE.match(tail) else None)
        if key is not None:
            c = _joined_candidate(doc, j, key, s, e, SCORE_NARRATIVE - 0.2)
            if c is not None:
                out.append(c)
    return out
