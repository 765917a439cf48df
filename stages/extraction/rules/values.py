"""Values, per field kind: the part of a text after a label that holds the value, and whether it is plausible."""
from __future__ import annotations

import re
from typing import Optional

from stages.extraction.field_specs import FIELDS
from stages.extraction.rules.lexicon import ALL_ATTR_WORDS, LABELS, SECTION_SUFFIXES
from stages.extraction.rules.lines import CJK_RE
from stages.extraction.strategies import PATTERN, UNKNOWN_LABEL
from stages.postprocess.values import STATUTORY, Normalized, date_spans

# words that never occur in a person's name; particles only after the first character (向, 于, 和 are surnames)
_NAME_STOP = ("公司", "保险", "合同", "条款", "规定", "约定", "身故", "疾病", "意外", "年龄", "周岁", "签名", "签字",
              "签章", "身份", "证号", "信息", "资料", "证件", "号码", "电话", "地址", "姓名", "名称", "声明", "告知",
              "应当", "投保", "受益", "关系", "性别", "日期", "金额", "人民币", "详见", "本人", "同上", "本合同", "无",
              "不详")
_NAME_PARTICLES = "的了是或等为之也在及与"
_NAME_CJK_RE = re.compile(r"^[\u4e00-\u9fff]{2,6}$|^[\u4e00-\u9fff]{1,10}[·•][\u4e00-\u9fff·•]{1,16}$")
_NAME_LATIN_RE = re.compile(r"^[A-Za-z][A-Za-z .'\-]{1,40}$")
_LOOKALIKES = set("OoDlI|")  # fixed by the normalizers next to digits
_ID_CHARS = set("0123456789Xx×") | _LOOKALIKES
_PHONE_CHARS = set("0123456789+-()—. ") | _LOOKALIKES  # a fax reads a hyphen between groups as "."
AMOUNT_CHARS = set("0123456789,.¥$￥人民币RMBCNY:()大写小写整正约圆元角分零〇壹贰貳叁參参肆伍陆陸柒捌玖拾佰仟万萬亿億"
                   "一二两三四五六七八九十百千 ") | _LOOKALIKES
_CODE_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/ ")
_OPENING = {")": "(", "]": "[", "】": "【"}
_TRAILING_JUNK = ":;,.、。()（）[]【】-—_|/ …·"
_LEADING_JUNK = ":;,.、。)）]】-—_|/ …·>~*"


def _cut_gap(norm: str, s: int, e: int, min_gap: int) -> int:
    """End of the first segment of ``norm[s:e]`` before a whitespace run of at least ``min_gap``."""
    run = 0
    for i in range(s, e):
        if norm[i].isspace():
            run += 1
        else:
            if run >= min_gap and i - run > s:
                return i - run
            run = 0
    return e


def _prefix_of(norm: str, s: int, e: int, allowed: set[str]) -> int:
    i = s
    while i < e and norm[i] in allowed:
        i += 1
    return i


# capital numerals (with their traditional and variant forms) and units, as a capital amount is printed; one
# character that is none of them between two of them is a numeral or unit misread (伍拾陆方捌仟 for 万, 贰任贰佰
# for 仟, 叁拾玖园捌角 for 圆)
CAPITAL_CHARS = "零〇壹贰貳叁參参肆伍陆陸柒捌玖拾佰仟万萬亿億元圆角分"
_CAPITAL = set(CAPITAL_CHARS)


def _amount_end(norm: str, s: int, limit: int) -> int:
    """End of the amount that starts at ``s``: its amount characters, and past one misread character inside a capital
    amount, so that the normaliser sees the amount goes on (``amount_cut_off``) or reads its Arabic form, rather
    than a value cut where the misread stands."""
    e = _prefix_of(norm, s, limit, AMOUNT_CHARS)
    if s < e < limit - 1 and norm[e - 1] in _CAPITAL and norm[e + 1] in _CAPITAL and CJK_RE.match(norm[e]):
        e = _prefix_of(norm, e + 1, limit, AMOUNT_CHARS)
    return e


def strip_separators(norm: str, s: int, e: int) -> tuple[int, int]:
    """Drop separators around a value; keep a closing bracket that closes one inside the value."""
    while True:
        while s < e and (norm[s] in _LEADING_JUNK or norm[s].isspace()):
            s += 1
        while e > s and (norm[e - 1] in _TRAILING_JUNK or norm[e - 1].isspace()):
            if norm[e - 1] in ")]】" and norm.count(_OPENING[norm[e - 1]], s, e) > norm.count(norm[e - 1], s, e) - 1:
                break
            e -= 1
        if e > s and norm[e - 1] in "([【":
            e -= 1
            continue
        return s, e


def _trim_name(norm: str, s: int, e: int) -> int:
    i = s
    cjk = 0
    while i < e:
        ch = norm[i]
        if ch in "(),;。、/|:[]【】<>《》\"'":
            break
        if ch.isspace():
            j = i
            while j < e and norm[j].isspace():
                j += 1
            if j - i >= 2 or cjk >= 2 or j >= e:
                break
            i = j
            continue
        if CJK_RE.match(ch):
            cjk += 1
        i += 1
    return i


def cut_from_spaced_word(value: str, after: str) -> bool:
    """``value`` is letter-spaced (one space between characters) and ``after`` (the text that follows it in its box)
    goes on in the same spacing: the value was cut out of a longer letter-spaced word (联 络 | 电 话, a label)."""
    return bool(_SPACED_RE.fullmatch(value) and _SPACED_AFTER_RE.match(after))


def trim_value(kind: str, norm: str, s: int, e: int) -> tuple[int, int]:
    """The part of ``norm[s:e]`` that holds a value of ``kind`` (after the label's separators)."""
    s, e = strip_separators(norm, s, e)
    if s >= e:
        return s, s
    if kind in ("name", "beneficiary"):
        while e - s > 2 and norm[s] in _NAME_LEADER_LOOKALIKES and CJK_RE.match(norm[s + 1]):
            s += 1  # 一郑洋, 一法定: a dash leader read as 一 (no surname is 一 or 十)
        e = _trim_name(norm, s, e)
    elif kind == "id_number":
        e = _prefix_of(norm, s, e, _ID_CHARS | {" "})
    elif kind == "phone":
        e = _prefix_of(norm, s, e, _PHONE_CHARS)
    elif kind == "amount":
        e = _amount_end(norm, s, _cut_gap(norm, s, e, 3))
        if e < len(norm) and norm[e] in _YEAR_SUFFIXES and _YEAR_RE.fullmatch(norm[s:e].strip("( ")):
            return s, s  # (2026版), 2036年2月28日: a year, not an amount
    elif kind == "date":
        spans = date_spans(norm[s:e])
        if not spans or spans[0][0] > 2:
            return s, s
        s, e = s + spans[0][0], s + spans[0][1]
    elif kind == "code":
        e = _cut_gap(norm, s, _prefix_of(norm, s, e, _CODE_CHARS), 2)
    else:  # free text: up to a wide gap or sentence punctuation
        m = _JUNK_BEFORE_PROVINCE_RE.match(norm, s)
        if m and m.end() < e:
            s = m.end()  # 上重庆市…: a speck of the underline read as a character before the province
        e = _cut_gap(norm, s, e, 2)
        stop = next((i for i in range(s, e) if norm[i] in ",;。!?【" or (norm[i] == "·" and i > s)), e)
        e = stop
    return strip_separators(norm, s, e)


def trim_field(key: str, norm: str, s: int, e: int, before: str = "") -> tuple[int, int]:
    """Field-specific trims after :func:`trim_value`, for labels outside the lexicon that stay glued to a value:
    the next label after an address that ends in a unit (``…1606室被保人``, ``…15层居民身份证``, ``…8层3302031966…``),
    anything after an address's room or top floor (``…103室本公司根据``, ``…35层联系电话``),
    a label head or a long number before a product name (``名称：金福…``, ``险种名称金福…``, ``15827764502…鸿运…``) and
    whatever follows a product's qualifier
    (``…保险(分红型)RAS2027…``), and the 名 that ends a label glued to a product name (``保险产品名倍护…``: ``before``,
    the text before the value on its line, ends in a Chinese character)."""
    if key == "policyholder_address":
        tail = next((m for m in _ADDRESS_TAIL_RE.finditer(norm, s, e) if m.end() == e), None)
        if tail is not None:
            e = tail.start(1)
        end = _ADDRESS_END_RE.search(norm, s, e)
        if end is not None:
            e = end.end()
    elif key == "product_name":
        m = _PRODUCT_HEAD_RE.match(norm, s, e)
        if m and any(ch in norm[m.end():e] for ch in "险保"):
            s = m.end()
        elif norm.startswith("名", s) and CJK_RE.fullmatch((norm[:s] or before)[-1:]) and "险" in norm[s + 1:e]:
            s += 1  # the 名 of a label glued to the name (保险产品名倍护意外伤害保险: the label is 保险产品名)
        lead = _GLUED_NUMBER_RE.match(norm, s, e)
        if lead is not None:
            s = lead.end()  # a policy number glued before the name (1582776450235620669鸿运医疗保险)
        q = _PRODUCT_QUALIFIER_RE.search(norm, s, e)
        if q is not None:  # the name ends with its qualifiers: 保险(分红型) + a glued policy number or label
            e = _PRODUCT_EDITION_RE.match(norm, q.end(), e).end()
    return s, e


# after the last unit of an address, up to the end of the value: (list numbering +) a CJK run that ends like a
# label (a person, a document, a kind, a number...), or an ID number
_ADDRESS_TAIL_RE = re.compile(
    r"(?<=[室层楼座])((?:[一二三四五六七八九十]{1,2}[、.])?[\u4e00-\u9fff]{0,6}(?:人|证|号|号码|身份|类型|电话|姓名|名称|日期|编号|信息)"
    r"|\d{15,17}[\dXx])")
# an address ends with its room (室), or with a floor (层) that no room follows: what comes after is another text
_ADDRESS_END_RE = re.compile(r"^.*?(?:室(?=[^\s)）])|层(?![^室]*室)(?=[^\sA-Za-z0-9)）]))")
_PRODUCT_HEAD_RE = re.compile(r"[\u4e00-\u9fff]{0,4}名称[:：.·…\s]*")
_GLUED_NUMBER_RE = re.compile(r"[0-9A-Za-z\-]{8,}(?=[\u4e00-\u9fff])")
_PRODUCT_QUALIFIER_RE = re.compile(r"(?:保险|寿险|险)\([\u4e00-\u9fff0-9]{1,10}\)")
# what may follow a qualifier: more of them and an edition (保险(2024版)(互联网专属)A款)
_PRODUCT_EDITION_RE = re.compile(r"(?:\s*\([^()]{1,12}\))*\s*(?:[A-Za-z0-9]?款)?")
_NAME_LEADER_LOOKALIKES = "一十"
_YEAR_RE = re.compile(r"(?:19|20)\d\d")
_YEAR_SUFFIXES = "版年款"
_SPACED_RE = re.compile(r"\S(?: \S)+")
_SPACED_AFTER_RE = re.compile(r" [\u4e00-\u9fff](?: |$)")
_PROVINCES = ("北京", "天津", "上海", "重庆", "河北", "山西", "辽宁", "吉林", "黑龙江", "江苏", "浙江", "安徽", "福建",
              "江西", "山东", "河南", "湖北", "湖南", "广东", "海南", "四川", "贵州", "云南", "陕西", "甘肃", "青海",
              "台湾", "内蒙古", "广西", "西藏", "宁夏", "新疆", "香港", "澳门")
_JUNK_BEFORE_PROVINCE_RE = re.compile(
    "[^\u4e00-\u9fff]{0,2}[\u4e00-\u9fff]?(?=(?:%s)[\u4e00-\u9fff]{0,4}(?:省|市|自治区|特别行政区))"
    % "|".join(_PROVINCES))

_TEXT_MUST_CONTAIN: dict[str, tuple[str, ...]] = {
    "insurer": ("公司", "保险", "人寿", "财险", "寿险", "集团", "健康", "养老", "机构", "中心"),
    # a product names a kind of insurance (and is not 本保险, see plausibility); a bare 保 is not enough: 承保机构,
    # 基本保额 are labels
    "product_name": ("险", "计划", "年金"),
    "policyholder_address": ("省", "市", "区", "县", "路", "街", "号", "镇", "村", "道", "巷", "弄", "室", "栋", "楼"),
}


def plausibility(key: str, n: Normalized, method: str) -> Optional[float]:
    """A score factor for a normalized candidate (``None``: not a plausible value of this field)."""
    kind = FIELDS[key].kind
    v = n.value
    if v is None:
        return None
    penalty = 0.8 if n.issues else 1.0
    if kind in ("name", "beneficiary"):
        if kind == "beneficiary" and v == STATUTORY:
            return 1.0
        if not (_NAME_CJK_RE.match(v) or _NAME_LATIN_RE.match(v)):
            return None
        if (any(w in v for w in _NAME_STOP) or any(ch in _NAME_PARTICLES for ch in v[1:])
                or any(w in v for w in ALL_ATTR_WORDS)):
            return None
        return 1.0
    if kind == "id_number":
        if method == PATTERN and n.issues:
            return None  # an unlabelled 18-digit number is only an ID if it checks out
        if "id_format" in n.issues:
            digits = sum(ch.isdigit() for ch in v)
            return 0.5 if method != PATTERN and 15 <= digits <= 19 and len(v) <= 19 else None
        return penalty
    if kind == "phone":
        if "phone_format" in n.issues:
            digits = sum(ch.isdigit() for ch in v)
            return 0.6 if method != PATTERN and digits >= 7 and not v.startswith(("95", "400", "800")) else None
        return 1.0
    if kind in ("amount", "date"):
        return penalty
    if kind == "code":
        return 1.0 if len(v) >= 4 and any(ch.isdigit() for ch in v) else None
    # free text
    if len(v) < 2 or not CJK_RE.search(v) and key != "product_name":
        return None
    if key in _TEXT_MUST_CONTAIN and not any(w in v for w in _TEXT_MUST_CONTAIN[key]):
        return None
    if key == "insurer" and not v.endswith(_TEXT_MUST_CONTAIN["insurer"]):
        return None
    if key == "policyholder_address" and len(v) < 6:
        return None
    if key == "product_name" and (v.startswith(("本", "该", "此")) or _ends_like_a_label(v, key)
                                  or v.endswith(_COMPANY_NAME_ENDS)):
        return None  # 本保险, a label read as a value, or a company's name (华信人寿保险股份有限公司)
    if key == "insurer" and method == UNKNOWN_LABEL and not v.endswith(_COMPANY_SUFFIXES):
        return None  # a label outside the lexicon: only a company name proves it names the insurer
    return 1.0


_COMPANY_SUFFIXES = ("公司", "集团", "分公司", "中心")
_COMPANY_NAME_ENDS = ("公司", "集团")  # how a company's name ends; no product's name does


def _ends_like_a_label(value: str, key: str) -> bool:
    """``基本保险金额``, ``保险合同信息``: a label (of another field) or a section title read as a value."""
    if value.endswith(SECTION_SUFFIXES):
        return True
    for text, d in LABELS.items():
        if len(text) >= 2 and value.endswith(text) and key not in d.fields:
            return True
    return False
