"""Label hits: every lexicon label in a line, the separators after it, and whether it looks like a real label."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from stages.extraction.rules.lexicon import ATTR_QUALIFIERS, LabelDef, Lexicon
from stages.extraction.rules.lines import (CJK_RE, PUNCT, LineBox, after_leader, content_start,
                                           only_punctuation)

# a short parenthetical right after a label: 保险金额(元), 投保人(姓名), 保费(人民币元)
_UNIT_PAREN_RE = re.compile(r"^\((?:[\u4e00-\u9fff]{1,6}|单位:[\u4e00-\u9fff]{1,5}|RMB|¥|CNY)\)")
_CONNECTOR_RE = re.compile(r"^(?:为|是)")
_TAIL_RE = re.compile(r"[\u4e00-\u9fff]{1,4}(?=:)")


@dataclass(frozen=True)
class LabelHit:
    """A label found in a line: where, which, whether it looks like a real label, and where its value may start."""

    line: int  # index into the prepared lines
    start: int  # compact positions
    end: int
    label: LabelDef
    strong: bool
    value_start: int  # compact position after colon/leaders/connectors


def skip_connectors(comp: str, pos: int) -> tuple[int, bool]:
    """Skip ``(元)``, colons, dotted leaders and 为/是 after a label; returns (new pos, saw a separator)."""
    m = _UNIT_PAREN_RE.match(comp[pos:])
    if m:
        pos += m.end()
    start = pos
    pos = after_leader(comp, pos)
    saw = pos - start >= 2 or (pos > start and comp[start] == ":")  # a lone '.' or '-' is no separator
    m = _CONNECTOR_RE.match(comp[pos:])
    if m and not saw:
        pos += m.end()
        saw = True
        pos = after_leader(comp, pos)
    return pos, saw


def label_box_end(comp: str, start: int, end: int, pos: int, saw: bool) -> tuple[int, bool]:
    """A label opening its box followed only by punctuation (签单日期， / 被保险人姓名。 / 险种·: leader dots
    read as punctuation) ends the box: its value is another box."""
    if not saw and start <= content_start(comp) and end < len(comp) and only_punctuation(comp[end:]):
        return len(comp), True
    return pos, saw


def find_label_hits(line: LineBox, li: int, lexicon: Lexicon) -> list[LabelHit]:
    """Every label occurrence in the line (leftmost-longest); ``strong`` ones look like real labels."""
    out: list[LabelHit] = []
    comp = line.comp
    line_start = content_start(comp)
    covered = 0
    for m in lexicon.pattern.finditer(comp):
        label = lexicon.labels[m.group()]
        s, e = m.span()
        if s < covered:
            continue  # inside the tail of the label before (承保机构名称：: 名称 is no label of its own)
        value_start, separated = label_box_end(comp, s, e, *skip_connectors(comp, e))
        tail = None if separated or label.kind not in ("field", "period") or label.role else _tail_end(line, e, lexicon)
        if tail is not None:
            e = covered = tail
            value_start, separated = label_box_end(comp, s, e, *skip_connectors(comp, e))
        at_start = s <= line_start
        prev_norm = line.comp_to_norm[s - 1] if s > 0 else -1
        gap_before = s > 0 and line.comp_to_norm[s] - prev_norm > 1
        punct_before = s > 0 and comp[s - 1] in PUNCT
        # a short box that ends with the label (本期保险费, 合计保险金额): a label cell whose value is another box
        ends_box = (len(comp) <= 10 and not out and not any(ch in PUNCT for ch in comp[:s])
                    and only_punctuation(comp[e:]))
        strong = at_start or separated or gap_before or punct_before or ends_box
        if label.kind == "attr" and strong and not (at_start or gap_before or punct_before):
            strong = _qualified_ok(comp, s, out)
        out.append(LabelHit(li, s, e, label, strong, value_start))
    return out


def _tail_end(line: LineBox, end: int, lexicon: Lexicon) -> Optional[int]:
    """End of the rest of a field label that the lexicon matched only in part (``承保机构`` + ``全称：``): up to four CJK
    characters glued to the label and followed by a colon, holding no other label but an attribute word (名称).
    (Role words and distractors take no tail: 投保人单位名称 is not the policyholder, 保险责任开始日 not 保险责任.)"""
    m = _TAIL_RE.match(line.comp, end)
    if m is None or line.comp_to_norm[m.end() - 1] - line.comp_to_norm[end - 1] != m.end() - end:
        return None  # no tail, or one set apart by a space
    if any(lexicon.labels[h.group()].kind != "attr" for h in lexicon.pattern.finditer(line.comp, end, m.end())):
        return None  # 保险金额保险费：: two labels, not one
    return m.end()


def _qualified_ok(comp: str, start: int, previous: list[LabelHit]) -> bool:
    """A bare attribute label glued to the word before it: fine after a role word or an allowed qualifier."""
    if previous and previous[-1].end == start and previous[-1].label.role is not None:
        return True
    return any(comp.endswith(q, 0, start) and (start == len(q) or not CJK_RE.match(comp[start - len(q) - 1]))
               for q in ATTR_QUALIFIERS)
