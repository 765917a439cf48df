"""Type detectors over every OCR line: dates, amounts, ID numbers, mobile phones, names, addresses, companies,
product names and policy numbers. Each match becomes a candidate for every field of its type (a date for the
effective, expiry and issue dates; a name for each person); the scorer decides which, if any."""
from __future__ import annotations

import re
import unicodedata
from datetime import date
from functools import lru_cache
from typing import Iterator

from stages.extraction.label_similarity import LABEL_LIKE, best_similarity
from stages.extraction.learned.candidates import Candidate, DocLines, span_candidate
from stages.extraction.rules.lexicon import FULL_LEXICON, Lexicon
from stages.extraction.rules.lines import after_leader
from stages.postprocess.regions import opens_with_division
from stages.postprocess.surnames import listed
from stages.postprocess.values import (AR_DATE_SEP_MONTH, AR_DATE_SEP_YEAR, GROUPED_NUMBER, NUMBER_START,
                                      id_number_issues)

_CN = "〇○零一二三四五六七八九"
# a date in Arabic numerals, with the normalizer's separators (one of two dots perhaps read as a comma), or in
# Chinese numerals; OCR may read a year's 〇 as O or 0 (二O二二年, 二0一九年), the first character stays one
DATE_RE = re.compile(
    rf"(?<!\d)\d{{4}}\s*{AR_DATE_SEP_YEAR}\s*\d{{1,2}}\s*{AR_DATE_SEP_MONTH}\s*\d{{1,2}}\s*[日号]?"
    rf"|[{_CN}][{_CN}O0o]{{3}}\s*年\s*(?:元|十[一二]?|[一二三四五六七八九])\s*月\s*(?:[二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*[日号]"
)
AMOUNT_RE = re.compile(
    # a number in thousands groups, whichever separator OCR read (full stops too): the normalizer's grammar
    rf"(?:(?:人民币|RMB)?\s*[¥￥]\s*)?{GROUPED_NUMBER}(?:\s*元整?)?"
    r"|(?:人民币|RMB)?\s*[¥￥]\s*\d[\d,]*(?:\.\d{1,2})?\s*万?\s*元?"
    rf"|{NUMBER_START}\d[\d,]*(?:\.\d{{1,2}})?\s*万?元(?:整)?"
    rf"|{NUMBER_START}\d{{1,3}}(?:,\d{{3}})+(?:\.\d{{1,2}})?"
    rf"|{NUMBER_START}(?<!-)\d+\.\d{{2}}(?![\d.\-])"
    r"|(?:人民币)?[零壹贰叁参肆伍陆柒捌玖拾佰仟万亿]{2,}[元圆](?:[零壹贰叁参肆伍陆柒捌玖]角)?(?:零?[壹贰叁参肆伍陆柒捌玖]分)?整?"
)
ID_RE = re.compile(r"(?<![0-9A-Za-z])\d{17}[\dXx](?![0-9A-Za-z])")
# a mobile in its 3-4-4 groups, apart or split by a space, a hyphen or a dot (a fax reads a hyphen as one)
PHONE_RE = re.compile(r"(?<!\d)(?<!\d\.)1[3-9]\d[\s\-.]?\d{4}[\s\-.]?\d{4}(?!\.?\d)")
# a code starts a token: after no letter or digit, nor after a hyphen inside one (E685-1957: not 1957...); a hyphen
# leading it is a leader's (保单号 -878126835366666)
CODE_RE = re.compile(r"(?<![0-9A-Za-z])(?<![0-9A-Za-z]-)[0-9A-Z][0-9A-Z\-]{7,29}(?![0-9A-Za-z\-])")
# a run of text between separators (spaces, colons, brackets and sentence punctuation)
SEGMENT_RE = re.compile(r"[^\s:：;；,，。、()（）\[\]【】]+")
COMPANY_RE = re.compile(r"[\u4e00-\u9fff（）()]{2,}保险[\u4e00-\u9fff（）()]*公司")
# a product: ends in 险 or 计划, then its qualifiers and edition as the rules read them (rules/values.py):
# 重大疾病保险(2024版)(互联网专属)A款
PRODUCT_RE = re.compile(r"[\u4e00-\u9fffA-Za-z0-9（）()·]{2,}(?:险|计划)(?:[（(][\u4e00-\u9fffA-Za-z0-9]+[)）])*"
                        r"(?:[A-Za-z0-9]?款)?")
CJK_RUN_RE = re.compile(r"[\u4e00-\u9fff·]+")
GLUED_LABEL_MAX = 6  # the longest label read glued to a product name that a shorter candidate starts after

DATE_FIELDS = ("effective_date", "expiry_date", "issue_date")
AMOUNT_FIELDS = ("sum_insured", "premium")
ID_FIELDS = ("policyholder_id_number", "insured_id_number")
NAME_FIELDS = ("policyholder_name", "insured_name", "beneficiary_name")
LEGAL_HEIRS = re.compile(r"法定(?:继承人)?")


@lru_cache(maxsize=1)
def _surnames() -> frozenset[str]:
    return listed()


@lru_cache(maxsize=8192)
def fold(text: str) -> str:
    """Full-width forms folded to their ASCII form character by character (same length as ``text``)."""
    out = []
    for ch in text:
        f = unicodedata.normalize("NFKC", ch)
        out.append(f if len(f) == 1 else ch)
    return "".join(out)


def _matches(doc: DocLines, pattern: re.Pattern) -> Iterator[tuple[int, int, int, int]]:
    for pi, li, ln in doc.flat:
        for m in pattern.finditer(fold(ln.text)):
            s, e = m.span()
            while s < e and ln.text[s].isspace():
                s += 1
            while e > s and ln.text[e - 1].isspace():
                e -= 1
            if e > s:
                yield pi, li, s, e


def _glued_label_ends(text: str, s: int, e: int, lexicon: Lexicon) -> list[int]:
    """Where a product match may start after a label read glued to it (``险种鸿运两全保险``, a wording the lexicon
    may lack): after each head of 2..GLUED_LABEL_MAX Chinese characters that reads like a product label (LABEL_LIKE;
    an insurer's brand ``泰和人寿`` does not) where the rest is a product name itself. Every such head gives a
    candidate: how alike a head is to the known labels does not tell where an unknown one ends (``投保险`` is more
    like ``保险险种`` than the label ``投保险别`` is), and the scorer weighs each start's label evidence."""
    out = []
    for k in range(s + 2, min(s + GLUED_LABEL_MAX, e - 4) + 1):
        if not CJK_RUN_RE.fullmatch(text[s:k]):
            break
        if _continues_label(text, k):
            continue
        like = best_similarity(text[s:k], lexicon.by_field["product_name"])
        if like >= LABEL_LIKE and PRODUCT_RE.fullmatch(text, k, e):
            out.append(k)
    return out


def _continues_label(text: str, k: int) -> bool:
    """Whether ``text[k]`` carries on the label word before it, so that no label ends at ``k``: the attribute
    名 (产品 + 名: 保险产品名), or the 称 of 名称."""
    return text.startswith("名", k) or (k > 0 and text[k - 1:k + 1] == "名称")


def _name_spans(text: str) -> Iterator[tuple[int, int]]:
    """Runs of 2-4 Chinese characters starting with a listed surname (a whole run, or the tail after a colon)."""
    surnames = _surnames()
    for m in CJK_RUN_RE.finditer(text):
        run = m.group()
        if 2 <= len(run) <= 4 and (run[0] in surnames or run[:2] in surnames):
            yield m.start(), m.end()


def _address_spans(text: str) -> Iterator[tuple[int, int]]:
    """Segments of six or more characters (after a leader) that begin (within their first eight) with a province or
    city name."""
    for m in SEGMENT_RE.finditer(text):
        start = after_leader(text, m.start(), m.end())  # a leader opening it is not the address's (……广东省…)
        seg = text[start:m.end()]
        if len(seg) < 6 or not CJK_RUN_RE.match(seg):
            continue
        for k in range(0, min(len(seg) - 5, 8)):
            if opens_with_division(seg, k):
                yield start + k, m.end()
                break


def detector_candidates(doc: DocLines, today: date, lexicon: Lexicon = FULL_LEXICON) -> list[Candidate]:
    """Every detector match as a candidate for each field of its type (``lexicon``: the labels a product's glued
    label is compared with)."""
    out: list[Candidate] = []

    def add(pi: int, li: int, s: int, e: int, keys: tuple[str, ...], name: str) -> None:
        for key in keys:
            c = span_candidate(doc, key, pi, li, s, e, "detector", name, today)
            if c is not None:
                out.append(c)

    for pi, li, s, e in _matches(doc, DATE_RE):
        add(pi, li, s, e, DATE_FIELDS, "date")
    for pi, li, s, e in _matches(doc, AMOUNT_RE):
        add(pi, li, s, e, AMOUNT_FIELDS, "amount")
    for pi, li, s, e in _matches(doc, ID_RE):
        add(pi, li, s, e, ID_FIELDS, "id_number")
    for pi, li, s, e in _matches(doc, PHONE_RE):
        add(pi, li, s, e, ("policyholder_phone",), "phone")
    for pi, li, s, e in _matches(doc, COMPANY_RE):
        add(pi, li, s, e, ("insurer",), "company")
    for pi, li, s, e in _matches(doc, PRODUCT_RE):
        add(pi, li, s, e, ("product_name",), "product")
        for k in _glued_label_ends(fold(doc.line((pi, li, 0)).text), s, e, lexicon):
            add(pi, li, k, e, ("product_name",), "product")
    for pi, li, s, e in _matches(doc, CODE_RE):
        token = fold(doc.line((pi, li, 0)).text[s:e])
        # an ID number (valid check character and birth date) is no policy number; other 18 digits may be one
        if sum(ch.isdigit() for ch in token) >= 6 and not (ID_RE.fullmatch(token)
                                                             and not id_number_issues(token.upper(), today)):
            add(pi, li, s, e, ("policy_number",), "code")
    for pi, li, s, e in _matches(doc, LEGAL_HEIRS):
        add(pi, li, s, e, ("beneficiary_name",), "legal_heirs")
    for pi, li, ln in doc.flat:
        text = fold(ln.text)
        for s, e in _name_spans(text):
            add(pi, li, s, e, NAME_FIELDS, "name")
        for s, e in _address_spans(text):
            add(pi, li, s, e, ("policyholder_address",), "address")
    return out
