"""Insurance vocabulary as a lexicon for product and insurer names: the kinds of insurance and of companies.

Product names end in a kind of insurance (重大疾病保险, 两全保险, 终身寿险, ...) with an optional design qualifier
(分红型, 万能型), and insurers are named by a kind of company (人寿保险股份有限公司, ...): the industry's
categories, not any one company's names. :func:`near_terms` finds where a read text holds a term with exactly one
character misread (重人疾病保险, 养客保险), for the re-reading step to score against the recognizer's frames.
"""
from __future__ import annotations

from stages.postprocess.regions import Edit

PRODUCT_TERMS: tuple[str, ...] = (
    # life, annuity and health insurance kinds
    "定期寿险", "终身寿险", "增额终身寿险", "两全保险", "年金保险", "养老年金保险", "重大疾病保险", "疾病保险",
    "医疗保险", "住院医疗保险", "门急诊医疗保险", "护理保险", "长期护理保险", "失能收入损失保险",
    "意外伤害保险", "交通意外伤害保险", "旅行意外伤害保险", "驾乘人员意外伤害保险",
    # property and liability kinds
    "家庭财产保险", "家庭财产综合保险", "财产综合保险", "责任保险", "机动车辆保险", "货物运输保险",
    # design types
    "分红型", "万能型", "投资连结型", "普通型",
)
INSURER_TERMS: tuple[str, ...] = (
    "人寿保险股份有限公司", "财产保险股份有限公司", "养老保险股份有限公司", "健康保险股份有限公司",
    "保险集团股份有限公司", "人寿保险有限公司", "财产保险有限公司", "保险股份有限公司", "保险有限公司",
)
MIN_TERM = 4  # shorter terms are too easy to reach by one misread character
ANCHORED = 6  # a term this long may have its first or last character misread


def near_terms(text: str, terms: tuple[str, ...]) -> list[tuple[Edit, ...]]:
    """One single-substitution edit per place where ``text`` holds a term with exactly one character different;
    the first or last character only in terms of :data:`ANCHORED` characters or more (the rest anchors it). Longer
    terms first; a place is skipped where a term at least as long is there exactly or a longer one was found."""
    exact = [(i, i + len(t), len(t)) for t in terms for i in _find_all(text, t)]
    taken: list[tuple[int, int, int]] = list(exact)
    out: list[tuple[Edit, ...]] = []
    for term in sorted((t for t in terms if len(t) >= MIN_TERM), key=len, reverse=True):
        n = len(term)
        for i in range(len(text) - n + 1):
            window = text[i : i + n]
            diff = [k for k in range(n) if window[k] != term[k]]
            if len(diff) != 1 or (diff[0] in (0, n - 1) and n < ANCHORED):
                continue
            if any(a < i + n and i < b and size >= n for a, b, size in taken):
                continue
            taken.append((i, i + n, n))
            out.append(((i + diff[0], term[diff[0]]),))
    return out


def _find_all(text: str, term: str) -> list[int]:
    out, i = [], text.find(term)
    while i >= 0:
        out.append(i)
        i = text.find(term, i + 1)
    return out
