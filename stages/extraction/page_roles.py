"""Page roles of a multi-page policy (schedule, letter, terms, other) and role-aware field extraction.

A bundle's cover letter and terms carry values shaped like fields -- an agent's name, a mailing date, a renewal
premium, a worked example under the schedule's own labels. When a document has a schedule page among several,
fields are read from its schedule and other pages only; letter and terms pages never supply a field value, so a
distractor there cannot beat the schedule's value. Each field keeps the page it was read on.
"""
from __future__ import annotations

import re
import dataclasses
from typing import Callable, Sequence

from stages.contracts.types import Page, TextLine
from stages.extraction.stage import DocumentFields

ROLES: tuple[str, ...] = ("schedule", "letter", "terms", "other")

_ARTICLE = re.compile(r"^\s*第[一二三四五六七八九十百零〇0-9]+[条章节]")
_LETTER_MARKS = ("尊敬的", "此致", "敬礼", "函", "致客户", "一封信", "您好")
_TERMS_MARKS = ("条款", "释义", "责任免除", "保险责任", "合同解除", "争议处理")
# words of schedule labels (docs/schema.md); a schedule page carries many of them, each on its own label
_SCHEDULE_WORDS = ("保险单号", "保单号", "投保人", "被保险人", "受益人", "身份证", "证件号", "联系电话", "手机",
                   "地址", "保险金额", "保险费", "保费", "生效", "起期", "止期", "满期", "签单", "签发", "险种", "产品名称")

FieldStage = Callable[[Sequence[Sequence[TextLine]], Sequence[Page]], DocumentFields]


def page_role(lines: Sequence[TextLine]) -> str:
    """The role of one page from its OCR lines (reading order)."""
    texts = [ln.text for ln in lines]
    head = "".join(texts[:6])
    articles = sum(1 for t in texts if _ARTICLE.match(t))
    short_labels = sum(1 for t in texts if len(t) <= 24 and any(w in t for w in _SCHEDULE_WORDS))
    terms = articles >= 2 or any(m in head for m in _TERMS_MARKS[:1])
    letter = any(m in head for m in _LETTER_MARKS) or sum(1 for t in texts if any(m in t for m in _LETTER_MARKS[:3])) >= 2
    if short_labels >= 6 and articles < 3:  # a form or table of labels and values
        return "schedule"
    if terms:
        return "terms"
    if letter:
        return "letter"
    # a narrative schedule ("兹有投保人……") names the fields in sentences rather than in short labels
    words = sum(1 for w in _SCHEDULE_WORDS if any(w in t for t in texts))
    return "schedule" if short_labels >= 4 or words >= 6 else "other"


class RoleAwareFields:
    """Wraps a field stage: with two or more pages and a schedule among them, letter and terms pages are hidden
    from extraction (their lines are not offered; page positions stay as they are). Diagnostics gain the roles."""

    def __init__(self, inner: FieldStage):
        self.inner = inner

    def __call__(self, lines: Sequence[Sequence[TextLine]], pages: Sequence[Page]) -> DocumentFields:
        roles = [page_role(page_lines) for page_lines in lines]
        offered: Sequence[Sequence[TextLine]] = lines
        if len(lines) > 1 and "schedule" in roles:
            offered = [page_lines if role not in ("letter", "terms") else [] for page_lines, role in zip(lines, roles)]
        found = self.inner(offered, pages)
        return dataclasses.replace(found, diagnostics={**found.diagnostics, "page_roles": roles})
