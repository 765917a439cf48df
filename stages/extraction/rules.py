"""Rules-only baseline extractor: OCR lines (text + polygon + page) -> one candidate per field of DESIGN §5.

How a value is found, strongest first:

1. a label from :data:`LABELS` (tolerant to inner spaces, an optional colon, ``(元)``, dotted leaders, 为/是)
   followed by (a) the rest of its line, else (b) the nearest line to its right on the same row,
   else (c) the line directly below it (in a column table: the value under the same header);
2. narrative sentences (``兹有投保人张三（身份证号码：…）以李四为被保险人``, ``自…零时起至…二十四时止``),
   read over the lines of a wrapped paragraph joined together;
3. field-shaped patterns (valid 18-character IDs near 投保人/被保险人, mobiles, dated lines, company names).

Bare labels (姓名, 证件号码, 联系电话, 地址) take their role from the nearest role word before them (same line,
same row, a merged cell to the left, or earlier lines); agent/hotline/company labels are distractors whose
values are never used. Every value is normalized with the field registry; the best-scored candidate per field wins.

Geometry is read after undoing the page's skew; an OCR line holding several boxes (runs of 2+ spaces) is split;
a label wrapped inside a table cell (``投保人通讯地`` / ``址``) is joined; a value that wraps (in a paragraph or a
cell) is continued on the next line.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, replace
from datetime import date
from typing import Any, Iterable, Mapping, Optional, Protocol, Sequence

import numpy as np

from stages.extraction.fields import FIELD_KEYS, FIELDS, normalize_field
from stages.extraction.label_similarity import field_similarities
from stages.postprocess.normalize import Normalized, date_spans

# ---------------------------------------------------------------------------------------------------------------------
# Input and output types


class OcrLineLike(Protocol):
    """What the extractor reads from a line: ``text`` and a 4x2 ``polygon`` in page pixels.

    A ``page`` attribute (int) is read when present (``stages.contracts.types.TextLine`` has none: page 0).
    """

    @property
    def text(self) -> str: ...

    @property
    def polygon(self) -> Any: ...


@dataclass(frozen=True)
class OcrLine:
    """A plain line, e.g. from a result JSON (``{"text": ..., "polygon": [[x, y] * 4]}``)."""

    text: str
    polygon: tuple[tuple[float, float], ...]
    page: int = 0


def lines_from_records(records: Iterable[Mapping[str, Any]], page: Optional[int] = None) -> list[OcrLine]:
    """Dicts with ``text``, ``polygon`` and optionally ``page`` -> :class:`OcrLine` (``page`` overrides)."""
    out = []
    for r in records:
        poly = tuple((float(x), float(y)) for x, y in r["polygon"])
        out.append(OcrLine(str(r["text"]), poly, int(page if page is not None else r.get("page", 0))))
    return out


@dataclass(frozen=True)
class RuleMatch:
    """One field found by the rules: the value text as read, where it was, how, and its normalization."""

    key: str
    text: str
    line_indices: tuple[int, ...]
    score: float
    method: str  # label | label_right | label_below | narrative | pattern | unknown_label | same_as_policyholder
    normalized: Normalized
    # competition (evidence for calibrated confidence): candidates for this key with another value, and how far
    # the best of them scored below this one (1.0 when there is none)
    rivals: int = 0
    margin: float = 1.0

    @property
    def value(self) -> Optional[str]:
        return self.normalized.value


# ---------------------------------------------------------------------------------------------------------------------
# Label dictionary


@dataclass(frozen=True)
class LabelDef:
    """A label string and what it introduces.

    kind: ``field`` (value goes to ``fields``), ``period`` (two dates -> effective/expiry), ``attr`` (a bare
    attribute whose field depends on the role in context), ``section`` (sets the role only),
    ``distractor`` (a value that must not be used).
    ``role`` is set for labels that name a role (投保人…, 代理人… with role ``"other"``).
    """

    text: str
    kind: str
    fields: tuple[str, ...] = ()
    attr: Optional[str] = None
    role: Optional[str] = None


ROLE_WORDS: dict[str, str] = {
    "投保人": "policyholder",
    "被保险人": "insured",
    "被保人": "insured",
    "受益人": "beneficiary",
    "身故受益人": "beneficiary",
    "身故保险金受益人": "beneficiary",
    "第一受益人": "beneficiary",
    "代理人": "other",
    "保险代理人": "other",
    "业务员": "other",
    "营销员": "other",
    "经办人": "other",
    "客户经理": "other",
    "服务人员": "other",
    "销售人员": "other",
    "理财经理": "other",
    "服务专员": "other",
    "代理机构": "other",
}

ATTR_WORDS: dict[str, tuple[str, ...]] = {
    "name": ("姓名", "名称"),
    "id": ("身份证号码", "身份证号", "身份证件号码", "身份证", "证件号码", "证件号", "证件号码(身份证)"),
    "phone": ("联系电话", "手机号码", "手机号", "移动电话", "电话号码", "电话", "手机"),
    "address": ("通讯地址", "联系地址", "通信地址", "住址", "居住地址", "地址"),
}

ROLE_FIELDS: dict[tuple[str, str], str] = {
    ("policyholder", "name"): "policyholder_name",
    ("policyholder", "id"): "policyholder_id_number",
    ("policyholder", "phone"): "policyholder_phone",
    ("policyholder", "address"): "policyholder_address",
    ("insured", "name"): "insured_name",
    ("insured", "id"): "insured_id_number",
    ("beneficiary", "name"): "beneficiary_name",
}

ROLE_NAME_FIELDS: dict[str, str] = {
    "policyholder": "policyholder_name",
    "insured": "insured_name",
    "beneficiary": "beneficiary_name",
}

FIELD_LABELS: dict[str, tuple[str, ...]] = {
    "policy_number": ("保险单号", "保险单号码", "保单号码", "保单号", "保险单编号", "保险合同号码", "保险合同编号",
                      "合同号码", "合同号", "合同编号", "保单合同号"),
    "insurer": ("保险公司", "承保公司", "保险人", "承保机构", "承保人", "公司名称", "保险公司名称",
                "承保公司名称"),
    "product_name": ("险种名称", "产品名称", "保险产品名称", "保险产品", "主险名称", "险种", "保险险种", "保险名称",
                     "产品", "主险", "计划名称"),
    "sum_insured": ("保险金额", "基本保险金额", "基本保额", "保额", "保险金额合计", "保障金额",
                    "基本保险金额合计", "保险金额总计", "总保额"),
    "premium": ("保险费", "首期保险费", "保费", "首期保费", "年交保费", "年缴保费", "年交保险费", "年缴保险费",
                "期交保费", "期缴保费", "应缴保费", "总保费", "保险费合计", "保费合计", "合计保费",
                "标准保费", "首年保费", "首期保费合计", "实收保费", "应交保险费", "应缴保险费"),
    "effective_date": ("生效日期", "保险起期", "起保日期", "合同生效日期", "保险责任开始日期",
                       "保单生效日", "保单生效日期", "生效日", "起保时间", "保险起始日期", "保险开始日期",
                       "合同生效日", "保险起始日", "起保日"),
    "expiry_date": ("满期日期", "保险止期", "终止日期", "保险责任终止日期", "满期日",
                    "保险终止日期", "保单到期日", "保险到期日", "保险期满日", "合同终止日期", "满期时间",
                    "保险止日", "终保日期"),
    "issue_date": ("签单日期", "签发日期", "出单日期", "签单日", "签发日", "签单时间", "签发时间", "保单签发日期",
                   "合同签发日期", "出单时间", "合同成立日期", "成立日期"),
}

PERIOD_LABELS = ("保险期间", "保险期限", "保障期间", "保障期限", "保险有效期", "有效期间")

# labels that are never (or never directly) a field value; listed so that they cut values and win overlaps
DISTRACTOR_LABELS = (
    "投保单号", "投保单号码", "批单号", "批单号码", "投保日期", "投保时间", "险种代码", "产品代码", "保险费率", "费率",
    "客服电话", "客户服务电话", "服务热线", "客服热线", "全国服务热线", "全国统一客服电话", "全国客服热线",
    "服务电话", "咨询电话", "投诉电话", "热线", "热线电话", "公司电话", "传真", "公司地址", "营业地址",
    "总公司地址", "分公司地址", "本公司地址", "公司住所", "住所", "邮编", "邮政编码", "网址", "公司网址",
    "代理人编码", "代理人代码", "代理人工号", "业务员工号", "业务员代码", "营销员代码", "营销员工号", "工号",
    "代码", "编码", "执业证号", "性别", "出生日期", "年龄", "职业", "职业代码", "国籍", "证件类型", "证件有效期",
    "婚姻状况", "关系", "与投保人关系", "与被保险人关系", "投保人与被保险人关系", "被保险人与投保人关系",
    "缴费方式", "交费方式", "缴费期间", "交费期间", "缴费年期", "交费年期", "缴费期限", "交费期限", "领取方式",
    "投保人签名", "投保人签章", "投保人签字", "被保险人签名", "被保险人签字", "被保险人签章", "投保人声明",
    "受益顺序", "受益比例", "受益份额", "受益人顺序", "受益人比例", "份数", "电子邮箱", "邮箱", "银行账号",
    "开户银行", "账号", "保险责任", "特别约定", "健康告知", "投保须知", "重要提示", "职业类别", "工作单位",
    "身高", "体重", "保单年度", "等待期", "免赔额", "赔付比例", "备注", "签章", "盖章", "签字", "签名",
    "服务地址", "营业场所", "出单机构", "管理机构", "营业机构", "打印时间", "打印日期", "币种", "官方网站",
    "销售渠道", "犹豫期", "授权账号", "交费账号", "缴费账号", "编号", "营销员编号", "本公司地址", "本公司电话",
)

SECTION_SUFFIXES = ("信息", "资料", "情况", "基本信息", "信息栏", "栏", "基本资料")

SAME_AS_POLICYHOLDER = ("同投保人", "同上", "本人", "投保人本人", "与投保人相同", "同投保人信息")

BOTH_PARTIES_LABELS = ("投保人/被保险人", "投保人及被保险人", "投保人和被保险人", "投保人、被保险人",
                       "投保人(被保险人)", "投保人兼被保险人", "投被保险人")


def _build_labels() -> dict[str, LabelDef]:
    labels: dict[str, LabelDef] = {}

    def add(d: LabelDef) -> None:
        labels.setdefault(d.text, d)

    for text in BOTH_PARTIES_LABELS:
        add(LabelDef(text, "field", ("policyholder_name", "insured_name"), "name", "policyholder"))
    for text in DISTRACTOR_LABELS:
        role = "policyholder" if text.startswith("投保人") else ("insured" if text.startswith("被保险人") else None)
        add(LabelDef(text, "distractor", role=role))
    for role_word, role in ROLE_WORDS.items():
        for attr, words in ATTR_WORDS.items():
            field = ROLE_FIELDS.get((role, attr))
            for word in words:
                for text in (role_word + word, role_word + "的" + word):
                    add(LabelDef(text, "field", (field,), attr, role) if field else
                        LabelDef(text, "distractor", role=role))
        for suffix in SECTION_SUFFIXES:
            add(LabelDef(role_word + suffix, "section", role=role))
        name_field = ROLE_NAME_FIELDS.get(role)
        add(LabelDef(role_word, "field", (name_field,), "name", role) if name_field else
            LabelDef(role_word, "distractor", role=role))
    for key, texts in FIELD_LABELS.items():
        for text in texts:
            add(LabelDef(text, "field", (key,)))
    for text in PERIOD_LABELS:
        add(LabelDef(text, "period", ("effective_date", "expiry_date")))
    for attr, words in ATTR_WORDS.items():
        for word in words:
            add(LabelDef(word, "attr", attr=attr))
    return labels


LABELS: dict[str, LabelDef] = _build_labels()
_LABEL_RE = re.compile("|".join(re.escape(t) for t in sorted(LABELS, key=len, reverse=True)))

# ---------------------------------------------------------------------------------------------------------------------
# Lines: raw text -> NFKC text (with a map back) -> compact text (whitespace removed, with a map to NFKC)

_PUNCT = set(":;,.!?()[]{}<>|/\\'\"`~@#$%^&*+=_-—–…·、。，；：！？（）【】《》「」『』〔〕")
_LEADER_CHARS = ":.…·_-—=|>~*"
_NUMBERING_RE = re.compile(r"^[【\[]?(?:[0-9]{1,2}[.、)]|[一二三四五六七八九十]{1,2}[、.)]|\([0-9一二三四五六七八九十]{1,2}\)|[•●■◆▪*-])")
# a short parenthetical right after a label: 保险金额(元), 投保人(姓名), 保费(人民币元)
_UNIT_PAREN_RE = re.compile(r"^\((?:[\u4e00-\u9fff]{1,6}|单位:[\u4e00-\u9fff]{1,5}|RMB|¥|CNY)\)")
_CONNECTOR_RE = re.compile(r"^(?:为|是)")
_UNKNOWN_LABEL_RE = re.compile(r"[\u4e00-\u9fff]{2,8}:")
_UNKNOWN_LABEL_START_RE = re.compile(r"[\u4e00-\u9fff]{2,8}(?:\([\u4e00-\u9fff]{1,6}\))?(?::|[.…·_\-—]{3,})")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
# words that may stand before a bare attribute label (居住地址, 本人电话); any other word there (服务地址, 客户姓名)
# makes it someone else's attribute
ATTR_QUALIFIERS = ("居住", "常住", "现", "现居", "现住", "本人", "个人", "有效", "常用", "户籍")


@dataclass(frozen=True)
class _Line:
    index: int
    page: int
    raw: str
    norm: str
    norm_to_raw: tuple[int, ...]
    comp: str
    comp_to_norm: tuple[int, ...]
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 1.0)

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


def _points(line: OcrLineLike) -> np.ndarray:
    return np.asarray(line.polygon, dtype=np.float64).reshape(-1, 2)


def estimate_skew(polygons: Sequence[np.ndarray]) -> float:
    """Dominant text angle (radians, y down) of a page from its line quadrilaterals: the length-weighted median angle
    of the top and bottom edges of lines at least twice as wide as tall; 0 when unknown or beyond 15 degrees."""
    angles: list[float] = []
    weights: list[float] = []
    for p in polygons:
        if p.shape != (4, 2):
            continue
        top, bottom = p[1] - p[0], p[2] - p[3]
        width, height = float(np.hypot(*top)), float(np.hypot(*(p[3] - p[0])))
        if width <= 0 or width < 2 * height:
            continue
        angles.append((np.arctan2(top[1], top[0]) + np.arctan2(bottom[1], bottom[0])) / 2)
        weights.append(width)
    if not angles:
        return 0.0
    order = np.argsort(angles)
    cum = np.cumsum(np.asarray(weights)[order])
    angle = float(np.asarray(angles)[order][int(np.searchsorted(cum, cum[-1] / 2))])
    return angle if abs(angle) < np.radians(15) else 0.0


def _deskew(pts: np.ndarray, angle: float) -> np.ndarray:
    """Rotate points by ``-angle`` about the origin so that text lines run horizontally."""
    if angle == 0.0:
        return pts
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([pts[:, 0] * c + pts[:, 1] * s, -pts[:, 0] * s + pts[:, 1] * c], axis=1)


def _prepare(index: int, line: OcrLineLike, angle: float = 0.0) -> _Line:
    raw = str(line.text)
    norm_chars: list[str] = []
    norm_to_raw: list[int] = []
    for i, ch in enumerate(raw):
        for n in unicodedata.normalize("NFKC", ch):
            norm_chars.append(n)
            norm_to_raw.append(i)
    norm = "".join(norm_chars)
    comp_to_norm = tuple(i for i, ch in enumerate(norm) if not ch.isspace())
    comp = "".join(norm[i] for i in comp_to_norm)
    pts = _deskew(_points(line), angle)
    return _Line(index, int(getattr(line, "page", 0) or 0), raw, norm, tuple(norm_to_raw), comp, comp_to_norm,
                 float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))


_GAP_RE = re.compile(r"\s{2,}")


def _split_at_gaps(line: _Line) -> list[_Line]:
    """An OCR line holding several boxes (``保险金额    保险费``: runs of 2+ spaces) as one box per part, each with the
    x range of its characters (spread evenly over the line)."""
    cuts = [m.span() for m in _GAP_RE.finditer(line.norm)]
    if not cuts or not line.comp:
        return [line]
    n = len(line.norm)
    bounds, start = [], 0
    for a, b in cuts:
        bounds.append((start, a))
        start = b
    bounds.append((start, n))
    parts = []
    for a, b in bounds:
        seg = line.norm[a:b]
        if not seg.strip():
            continue
        r0 = line.norm_to_raw[a]
        comp_to_norm = tuple(i - a for i in line.comp_to_norm if a <= i < b)
        x0 = line.x0 + (line.x1 - line.x0) * a / n
        x1 = line.x0 + (line.x1 - line.x0) * b / n
        parts.append(_Line(line.index, line.page, line.raw[r0: line.norm_to_raw[b - 1] + 1], seg,
                           tuple(k - r0 for k in line.norm_to_raw[a:b]), "".join(seg[i] for i in comp_to_norm),
                           comp_to_norm, x0, line.y0, x1, line.y1))
    return parts


def _raw_text(line: _Line, n0: int, n1: int) -> str:
    """Raw characters behind NFKC span ``[n0, n1)``."""
    if n1 <= n0:
        return ""
    return line.raw[line.norm_to_raw[n0]: line.norm_to_raw[n1 - 1] + 1]


def _comp_pos(line: _Line, norm_pos: int) -> int:
    """Compact position of the first non-space character at or after NFKC position ``norm_pos``."""
    return bisect.bisect_left(line.comp_to_norm, norm_pos)


def _norm_pos(line: _Line, comp_pos: int) -> int:
    return line.comp_to_norm[comp_pos] if comp_pos < len(line.comp) else len(line.norm)


def _x_at(line: _Line, comp_pos: int) -> float:
    """Approximate x of a character position (characters spread evenly over the box)."""
    n = max(len(line.comp), 1)
    return line.x0 + (line.x1 - line.x0) * min(max(comp_pos, 0), n) / n


def _reading_order(lines: Sequence[_Line]) -> list[int]:
    """Line indices page by page, row by row (boxes whose centres are within half a line height), left to right."""
    out: list[int] = []
    by_y = sorted(lines, key=lambda ln: (ln.page, ln.cy))
    row: list[_Line] = []
    for ln in by_y:
        if row and (ln.page != row[0].page or ln.cy - row[0].cy > 0.5 * min(ln.height, row[0].height)):
            out.extend(r.index for r in sorted(row, key=lambda r: r.x0))
            row = []
        row.append(ln)
    out.extend(r.index for r in sorted(row, key=lambda r: r.x0))
    return out


def _label_tail(head: _Line, lines: Sequence[_Line]) -> Optional[_Line]:
    """A short line right under ``head`` that completes a label wrapped inside a table cell (``投保人通讯地`` / ``址``)."""
    h = head.height
    for b in lines:
        aligned = min(abs(b.x0 - head.x0), abs(b.x0 + b.x1 - head.x0 - head.x1) / 2) <= 0.3 * h  # left or centred
        if (b is head or b.page != head.page or not 0 < len(b.comp) <= 3 or len(head.comp) < 4 or not aligned
                or not -0.2 * h <= b.y0 - head.y1 <= 0.4 * h):
            continue
        joined = head.comp + b.comp
        if any(m.start() < len(head.comp) < m.end() and not joined[m.end():].strip(_LEADER_CHARS)
               for m in _LABEL_RE.finditer(joined)):
            return b
    return None


def _merge_wrapped_labels(lines: list[_Line]) -> tuple[list[_Line], set[int]]:
    """Join each wrapped label tail to its head line; returns the lines (heads replaced) and the absorbed indices."""
    out = list(lines)
    dead: set[int] = set()
    for head in lines:
        if head.index in dead:
            continue
        tail = _label_tail(head, [ln for ln in lines if ln.index not in dead])
        if tail is None:
            continue
        dead.add(tail.index)
        out[head.index] = _Line(
            head.index, head.page, head.raw + tail.raw, head.norm + tail.norm,
            head.norm_to_raw + tuple(len(head.raw) + k for k in tail.norm_to_raw),
            head.comp + tail.comp, head.comp_to_norm + tuple(len(head.norm) + k for k in tail.comp_to_norm),
            min(head.x0, tail.x0), min(head.y0, tail.y0), max(head.x1, tail.x1), max(head.y1, tail.y1))
    return out, dead


# ---------------------------------------------------------------------------------------------------------------------
# Label occurrences


@dataclass(frozen=True)
class _Occ:
    line: int  # index into the prepared lines
    start: int  # compact positions
    end: int
    label: LabelDef
    strong: bool
    value_start: int  # compact position after colon/leaders/connectors


def _skip_connectors(comp: str, pos: int) -> tuple[int, bool]:
    """Skip ``(元)``, colons, dotted leaders and 为/是 after a label; returns (new pos, saw a separator)."""
    m = _UNIT_PAREN_RE.match(comp[pos:])
    if m:
        pos += m.end()
    start = pos
    while pos < len(comp) and comp[pos] in _LEADER_CHARS:
        pos += 1
    saw = pos - start >= 2 or (pos > start and comp[start] == ":")  # a lone '.' or '-' is no separator
    m = _CONNECTOR_RE.match(comp[pos:])
    if m and not saw:
        pos += m.end()
        saw = True
        while pos < len(comp) and comp[pos] in _LEADER_CHARS:
            pos += 1
    return pos, saw


def _only_punctuation_after(comp: str, end: int) -> bool:
    """Nothing but punctuation or leader characters (possibly nothing) follows compact position ``end``."""
    return all(ch in _PUNCT or ch in _LEADER_CHARS for ch in comp[end:])


def _label_box_end(comp: str, start: int, end: int, pos: int, saw: bool) -> tuple[int, bool]:
    """A label opening its box followed only by punctuation (制单日期， / 被保险人名称。 / 保障额度·: leader dots
    read as punctuation) ends the box: its value is another box."""
    if not saw and start <= _line_start(comp) and end < len(comp) and _only_punctuation_after(comp, end):
        return len(comp), True
    return pos, saw


def _line_start(comp: str) -> int:
    """Compact position after list numbering (``1.``, ``一、``, ``(2)``, bullets)."""
    m = _NUMBERING_RE.match(comp)
    return m.end() if m else 0


def _find_occurrences(line: _Line, li: int) -> list[_Occ]:
    """Every label occurrence in the line (leftmost-longest); ``strong`` ones look like real labels."""
    out: list[_Occ] = []
    comp = line.comp
    line_start = _line_start(comp)
    for m in _LABEL_RE.finditer(comp):
        label = LABELS[m.group()]
        s, e = m.span()
        value_start, separated = _label_box_end(comp, s, e, *_skip_connectors(comp, e))
        at_start = s <= line_start
        prev_norm = line.comp_to_norm[s - 1] if s > 0 else -1
        gap_before = s > 0 and line.comp_to_norm[s] - prev_norm > 1
        punct_before = s > 0 and comp[s - 1] in _PUNCT
        # a short box that ends with the label (指定受益人, 总保险金额): a label cell whose value is another box
        ends_box = (len(comp) <= 10 and not out and not any(ch in _PUNCT for ch in comp[:s])
                    and _only_punctuation_after(comp, e))
        strong = at_start or separated or gap_before or punct_before or ends_box
        if label.kind == "attr" and strong and not (at_start or gap_before or punct_before):
            strong = _qualified_ok(comp, s, out)
        out.append(_Occ(li, s, e, label, strong, value_start))
    return out


def _qualified_ok(comp: str, start: int, previous: list[_Occ]) -> bool:
    """A bare attribute label glued to the word before it: fine after a role word or an allowed qualifier."""
    if previous and previous[-1].end == start and previous[-1].label.role is not None:
        return True
    return any(comp.endswith(q, 0, start) and (start == len(q) or not _CJK_RE.match(comp[start - len(q) - 1]))
               for q in ATTR_QUALIFIERS)


# ---------------------------------------------------------------------------------------------------------------------
# Value trimming and shape checks, per field kind

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
_PHONE_CHARS = set("0123456789+-()— ") | _LOOKALIKES
_AMOUNT_CHARS = set("0123456789,.¥$￥人民币RMBCNY:()大写小写整正约圆元角分零〇壹贰貳叁參肆伍陆陸柒捌玖拾佰仟万萬亿億"
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


def _strip(norm: str, s: int, e: int) -> tuple[int, int]:
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
        if _CJK_RE.match(ch):
            cjk += 1
        i += 1
    return i


def _trim(kind: str, norm: str, s: int, e: int) -> tuple[int, int]:
    """The part of ``norm[s:e]`` that holds a value of ``kind`` (after the label's separators)."""
    s, e = _strip(norm, s, e)
    if s >= e:
        return s, s
    if kind in ("name", "beneficiary"):
        while e - s > 2 and norm[s] in _NAME_LEADER_LOOKALIKES and _CJK_RE.match(norm[s + 1]):
            s += 1  # 一郑洋, 一法定: a dash leader read as 一 (no surname is 一 or 十)
        e = _trim_name(norm, s, e)
    elif kind == "id_number":
        e = _prefix_of(norm, s, e, _ID_CHARS | {" "})
    elif kind == "phone":
        e = _prefix_of(norm, s, e, _PHONE_CHARS)
    elif kind == "amount":
        e = _prefix_of(norm, s, _cut_gap(norm, s, e, 3), _AMOUNT_CHARS)
    elif kind == "date":
        spans = date_spans(norm[s:e])
        if not spans or spans[0][0] > 2:
            return s, s
        s, e = s + spans[0][0], s + spans[0][1]
    elif kind == "code":
        e = _cut_gap(norm, s, _prefix_of(norm, s, e, _CODE_CHARS), 2)
    else:  # free text: up to a wide gap or sentence punctuation
        m = _GLUED_ADDRESS_LABEL_RE.match(norm, s)
        if m and m.end() < e:
            s = m.end()  # 家庭住址辽宁省…: an address label (any qualifier + 地址/住址) glued to its value
        m = _JUNK_BEFORE_PROVINCE_RE.match(norm, s)
        if m and m.end() < e:
            s = m.end()  # 上重庆市…: a speck of the underline read as a character before the province
        e = _cut_gap(norm, s, e, 2)
        stop = next((i for i in range(s, e) if norm[i] in ",;。!?【" or (norm[i] == "·" and i > s)), e)
        e = stop
    return _strip(norm, s, e)


_NAME_LEADER_LOOKALIKES = "一十"
_PROVINCES = ("北京", "天津", "上海", "重庆", "河北", "山西", "辽宁", "吉林", "黑龙江", "江苏", "浙江", "安徽", "福建",
              "江西", "山东", "河南", "湖北", "湖南", "广东", "海南", "四川", "贵州", "云南", "陕西", "甘肃", "青海",
              "台湾", "内蒙古", "广西", "西藏", "宁夏", "新疆", "香港", "澳门")
_JUNK_BEFORE_PROVINCE_RE = re.compile(
    "[^\u4e00-\u9fff]{0,2}[\u4e00-\u9fff]?(?=(?:%s)[\u4e00-\u9fff]{0,4}(?:省|市|自治区|特别行政区))"
    % "|".join(_PROVINCES))
_GLUED_ADDRESS_LABEL_RE = re.compile(r"[\u4e00-\u9fff]{0,6}(?:地址|住址)[:：]?")

_TEXT_MUST_CONTAIN: dict[str, tuple[str, ...]] = {
    "insurer": ("公司", "保险", "人寿", "财险", "寿险", "集团", "健康", "养老", "机构", "中心"),
    "product_name": ("险", "保", "计划", "年金"),  # and not 本保险 (see _plausible)
    "policyholder_address": ("省", "市", "区", "县", "路", "街", "号", "镇", "村", "道", "巷", "弄", "室", "栋", "楼"),
}


def _plausible(key: str, n: Normalized, method: str) -> Optional[float]:
    """A score factor for a normalized candidate (``None``: not a plausible value of this field)."""
    kind = FIELDS[key].kind
    v = n.value
    if v is None:
        return None
    penalty = 0.8 if n.issues else 1.0
    if kind in ("name", "beneficiary"):
        if kind == "beneficiary" and v == "法定":
            return 1.0
        if not (_NAME_CJK_RE.match(v) or _NAME_LATIN_RE.match(v)):
            return None
        if (any(w in v for w in _NAME_STOP) or any(ch in _NAME_PARTICLES for ch in v[1:])
                or any(w in v for words in ATTR_WORDS.values() for w in words)):
            return None
        return 1.0
    if kind == "id_number":
        if method == "pattern" and n.issues:
            return None  # an unlabelled 18-digit number is only an ID if it checks out
        if "id_format" in n.issues:
            digits = sum(ch.isdigit() for ch in v)
            return 0.5 if method != "pattern" and 15 <= digits <= 19 and len(v) <= 19 else None
        return penalty
    if kind == "phone":
        if "phone_format" in n.issues:
            digits = sum(ch.isdigit() for ch in v)
            return 0.6 if method != "pattern" and digits >= 7 and not v.startswith(("95", "400", "800")) else None
        return 1.0
    if kind in ("amount", "date"):
        return penalty
    if kind == "code":
        return 1.0 if len(v) >= 4 and any(ch.isdigit() for ch in v) else None
    # free text
    if len(v) < 2 or not _CJK_RE.search(v) and key != "product_name":
        return None
    if key in _TEXT_MUST_CONTAIN and not any(w in v for w in _TEXT_MUST_CONTAIN[key]):
        return None
    if key == "insurer" and not v.endswith(_TEXT_MUST_CONTAIN["insurer"]):
        return None
    if key == "policyholder_address" and len(v) < 6:
        return None
    if key == "product_name" and (v.startswith(("本", "该", "此")) or _ends_like_a_label(v, key)):
        return None
    if key == "insurer" and method == "unknown_label" and not v.endswith(_COMPANY_SUFFIXES):
        return None  # a label outside the lexicon: only a company name proves it names the insurer
    return 1.0


_COMPANY_SUFFIXES = ("公司", "集团", "分公司", "中心")


def _ends_like_a_label(value: str, key: str) -> bool:
    """``总保险金额``, ``保险合同信息``: a label (of another field) or a section title read as a value."""
    if value.endswith(SECTION_SUFFIXES):
        return True
    for text, d in LABELS.items():
        if len(text) >= 2 and value.endswith(text) and key not in d.fields:
            return True
    return False


# ---------------------------------------------------------------------------------------------------------------------
# Candidates


@dataclass(frozen=True)
class _Candidate:
    key: str
    score: float
    order: int  # reading-order rank of the first line (tie-breaker)
    match: RuleMatch


class _Doc:
    """Prepared lines, their reading order and label occurrences."""

    def __init__(self, lines: Sequence[OcrLineLike], today: date) -> None:
        self.today = today
        pages = [int(getattr(ln, "page", 0) or 0) for ln in lines]
        skew = {page: estimate_skew([_points(ln) for ln, p in zip(lines, pages) if p == page]) for page in set(pages)}
        boxes: list[_Line] = []
        self.source: list[int] = []  # box index -> index of the input line it came from
        for i, (src, p) in enumerate(zip(lines, pages)):
            for part in _split_at_gaps(_prepare(i, src, skew[p])):
                self.source.append(i)
                boxes.append(replace(part, index=len(boxes)))
        self.lines, dead = _merge_wrapped_labels(boxes)
        self.live = [ln for ln in self.lines if ln.index not in dead]
        self.order = _reading_order(self.live)
        self.rank = {li: r for r, li in enumerate(self.order)}
        self.right_edge: dict[int, float] = {}  # page -> right end of its text
        for ln in self.live:
            self.right_edge[ln.page] = max(self.right_edge.get(ln.page, ln.x1), ln.x1)
        self._next_cache: dict[tuple[int, bool], Optional[_Line]] = {}
        self._prev_cache: Optional[dict[int, int]] = None
        self.all_occ = [[] if i in dead else _find_occurrences(ln, i) for i, ln in enumerate(self.lines)]
        self.occ = [[o for o in occ if o.strong] for occ in self.all_occ]
        self._drop_label_fragments()

    # --- geometry ---------------------------------------------------------------------------------------------------

    def same_row(self, a: _Line, b: _Line) -> bool:
        if a.page != b.page:
            return False
        overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
        return overlap >= 0.5 * min(a.height, b.height)

    def right_of(self, line: _Line) -> Optional[_Line]:
        """The nearest line to the right that shares the row (a label centred on a two-line value counts)."""
        best: Optional[tuple[float, float]] = None
        found: Optional[_Line] = None
        for other in self.live:
            # detector boxes are unclipped outwards, so a value on an underline may start under the label's colon:
            # up to one line height of overlap, as long as most of the value lies to the right of the label
            if (other is line or other.page != line.page or other.x0 < line.x1 - 1.0 * line.height
                    or (other.x0 + other.x1) / 2 <= line.x1 or len(other.comp) < 2):
                continue  # (a lone character is a speck on the underline, not a value of ours)
            overlap = (min(line.y1, other.y1) - max(line.y0, other.y0)) / min(line.height, other.height)
            if overlap < 0.3:
                continue
            key = (round((other.x0 - line.x1) / line.height), other.y0)  # nearest column, then the upper line
            if best is None or key < best:
                best, found = key, other
        return found

    def below(self, line: _Line, x0: float, x1: float) -> Optional[_Line]:
        """The value under a label box: in the next row down, the line in the same column.

        A header row of n labels over a row of n values pairs them in order; otherwise the nearest line of the next
        row, provided no other box of the label's row is nearer to it.
        """
        under = [ln for ln in self.live if ln is not line and ln.page == line.page
                 and ln.cy > line.y1 - 0.2 * line.height and ln.y0 - line.y1 <= 2.0 * line.height]
        if not under:
            return None
        top = min(under, key=lambda ln: ln.y0)
        row = sorted((ln for ln in under if self.same_row(ln, top)), key=lambda ln: ln.x0)
        if any(self.starts_with_label(ln.index) for ln in row):
            return None  # the next row holds labels (a header row), not values
        headers = sorted((ln for ln in self.live if ln is line or self.same_row(ln, line)), key=lambda ln: ln.x0)
        if len(headers) == len(row):  # n labels over n values (a lone value under a lone label: any alignment)
            return row[headers.index(line)]

        def dist(a: _Line, ax0: float, ax1: float) -> tuple[float, float]:
            gap = max(a.x0 - ax1, ax0 - a.x1, 0.0)
            return gap, abs((a.x0 + a.x1) / 2 - (ax0 + ax1) / 2)

        best = min(row, key=lambda ln: dist(ln, x0, x1))
        if dist(best, x0, x1)[0] > 2 * line.height:
            return None
        rival = min(headers, key=lambda h: dist(best, h.x0, h.x1))
        return best if rival is line else None

    def starts_with_label(self, li: int) -> bool:
        """The line opens with a known label, or with an unknown one (``要保人：``, ``受保人……``)."""
        comp = self.lines[li].comp
        start = _line_start(comp)
        return any(o.start <= start for o in self.occ[li]) or bool(_UNKNOWN_LABEL_START_RE.match(comp, start))

    # --- values -----------------------------------------------------------------------------------------------------

    def value_end(self, li: int, start: int) -> int:
        """Compact end of a value starting at ``start``: the next label or unknown ``xxx:`` label."""
        end = len(self.lines[li].comp)
        for o in self.occ[li]:
            if o.start >= start:
                end = min(end, o.start)
                break
        m = _UNKNOWN_LABEL_RE.search(self.lines[li].comp, start, end)
        if m and m.start() > start:
            end = m.start()
        return end

    def continuation(self, li: int, joiners: bool = True) -> Optional[int]:
        """The next line of a wrapped paragraph or cell (see :meth:`next_in_paragraph`) unless it starts with a label
        or is the value of the next table row."""
        nxt = self.next_in_paragraph(li, joiners)
        if nxt is None or self.starts_with_label(nxt.index):
            return None
        # the value cell of the next table row: its label sits on its left
        for left in self.live:
            if (left is not nxt and left.x1 <= nxt.x0 + left.height and left.page == nxt.page
                    and abs(left.cy - nxt.cy) < left.height + nxt.height):
                if self.occ[left.index]:
                    last = self.occ[left.index][-1]
                    empty = self.value_end(left.index, last.value_start) <= last.value_start
                else:  # a label outside the lexicon with its leaders (生效时间.··)
                    m = _UNKNOWN_LABEL_START_RE.match(left.comp, _line_start(left.comp))
                    empty = m is not None and m.end() == len(left.comp)
                if empty and self.right_of(left) is nxt:
                    return None
        return nxt.index

    def row_run(self, segments: _Segments) -> _Segments:
        """A one-box value extended by the boxes of its row that touch it (gap under one line height) on either
        side, left to right: ``2026/02/03零时`` + ``-2027/02/03二十四时`` split by the detector."""
        if len(segments) != 1:
            return segments
        line = self.lines[segments[0][0]]
        run = [line]
        for step in (-1, 1):
            cur = line
            while True:
                nxt = [ln for ln in self.live if ln not in run and ln.page == cur.page and self.same_row(ln, cur)
                       and (ln.x0 - cur.x1 if step > 0 else cur.x0 - ln.x1) < cur.height
                       and ((ln.x0 + ln.x1) / 2 > (cur.x0 + cur.x1) / 2) == (step > 0)
                       and not self.starts_with_label(ln.index)]
                if not nxt:
                    break
                cur = min(nxt, key=lambda ln: abs((ln.x0 + ln.x1) / 2 - (cur.x0 + cur.x1) / 2))
                run.append(cur)
        if len(run) == 1:
            return segments
        run.sort(key=lambda ln: ln.x0)
        return tuple((ln.index, 0, self.value_end(ln.index, 0)) if ln is not line else segments[0] for ln in run)

    def cell_tail(self, segment: tuple[int, int, int]) -> _Segments:
        """The end of a value wrapped inside a table cell (an address whose last characters, ``室``, went to the next
        line): a short line just below, starting under the value's start, that is no label and no other row's
        value; the paragraph test of :meth:`continuation` misses it because the page goes on to the right."""
        li, cs, ce = segment
        line = self.lines[li]
        if ce < len(line.comp):
            return ()
        x = _x_at(line, cs)
        below = [ln for ln in self.live if ln.page == line.page and ln.y0 >= line.cy
                 and ln.y0 - line.y1 <= 0.7 * line.height and abs(ln.x0 - x) <= 1.5 * line.height]
        if not below:
            return ()
        nxt = min(below, key=lambda ln: ln.y0)
        if len(nxt.comp) > 8 or self.starts_with_label(nxt.index) or self.occ[nxt.index]:
            return ()
        if any(ln is not nxt and ln.page == nxt.page and self.same_row(ln, nxt) and ln.x1 <= nxt.x0 + ln.height
               and self.right_of(ln) is nxt for ln in self.live):
            return ()  # the value of a label on its left
        return ((nxt.index, 0, self.value_end(nxt.index, 0)),)

    def next_in_paragraph(self, li: int, joiners: bool = True) -> Optional[_Line]:
        """The line that ``li`` wraps onto: just below, about the same x, and either ``li`` ends in a joiner (``至``,
        ``-``, ``:``; when ``joiners``) or the next line's first phrase would not have fitted after its end
        (memoized)."""
        key = (li, joiners)
        if key not in self._next_cache:
            self._next_cache[key] = self._find_next_in_paragraph(li, joiners)
        return self._next_cache[key]

    def _find_next_in_paragraph(self, li: int, joiners: bool) -> Optional[_Line]:
        line = self.lines[li]
        joiner = joiners and line.comp.endswith(("至", "-", "~", "到", "—", "起", ":"))
        if not joiner and len(line.comp) < 16:
            return None
        below = [ln for ln in self.live if ln.page == line.page and ln.y0 >= line.cy
                 and ln.y0 - line.y1 <= 0.7 * line.height and abs(ln.x0 - line.x0) <= 2 * line.height]
        if not below:
            return None
        nxt = min(below, key=lambda ln: ln.y0)
        if joiner:
            return nxt
        # wrapped: the next line's first phrase would not have fitted after this line's end
        char_w = max((line.x1 - line.x0) / len(line.comp), 0.8 * line.height)
        first = re.split(r"[,;。、!?]", nxt.comp, maxsplit=1)[0] or nxt.comp
        fits = line.x1 + min(len(first), 40) * char_w <= self.right_edge[line.page]
        return None if fits else nxt

    def paragraph_prev(self, li: int) -> Optional[int]:
        """The line that ``li`` continues in a wrapped paragraph, if any."""
        if self._prev_cache is None:
            self._prev_cache = {}
            for ln in self.live:
                nxt = self.next_in_paragraph(ln.index, joiners=False)
                if nxt is not None:
                    self._prev_cache.setdefault(nxt.index, ln.index)
        return self._prev_cache.get(li)

    def _drop_label_fragments(self) -> None:
        """``…为被`` / ``保险人，…``: a label at the start of a wrapped line that is the tail of a longer label broken
        across the wrap is no label of its own (the joined-text pass sees the whole one)."""
        for line in self.live:
            nxt = self.next_in_paragraph(line.index, joiners=False)
            if nxt is None:
                continue
            joined = line.comp + nxt.comp
            cut = len(line.comp)
            for m in _LABEL_RE.finditer(joined, max(cut - 12, 0)):
                if m.start() < cut < m.end():
                    tail_end = m.end() - cut
                    self.occ[nxt.index] = [o for o in self.occ[nxt.index] if o.start >= tail_end]

    def make(self, key: str, li: int, cs: int, ce: int, method: str, base: float) -> Optional[_Candidate]:
        """Trim, normalize and score the compact span ``[cs, ce)`` of line ``li`` as a value of ``key``."""
        return self.make_segments(key, ((li, cs, ce),), method, base)

    def make_segments(self, key: str, segments: Sequence[tuple[int, int, int]], method: str,
                      base: float) -> Optional[_Candidate]:
        """Like :meth:`make` for a value spread over consecutive compact spans ``(line, start, end)``."""
        chars: list[str] = []
        owner: list[tuple[int, int]] = []  # (line, NFKC position) per character
        for li, cs, ce in segments:
            line = self.lines[li]
            if ce <= cs:
                continue
            n0, n1 = _norm_pos(line, cs), line.comp_to_norm[ce - 1] + 1
            chars.append(line.norm[n0:n1])
            owner.extend((li, k) for k in range(n0, n1))
        text = "".join(chars)
        s, e = _trim(FIELDS[key].kind, text, 0, len(text))
        parts: list[str] = []
        lines: list[int] = []
        i = s
        while i < e:
            li = owner[i][0]
            k = i
            while k < e and owner[k][0] == li:
                k += 1
            parts.append(_raw_text(self.lines[li], owner[i][1], owner[k - 1][1] + 1))
            lines.append(li)
            i = k
        raw = "".join(parts)
        if not raw.strip():
            return None
        return self.candidate(key, raw, tuple(lines), method, base)

    def candidate(self, key: str, text: str, lines: tuple[int, ...], method: str,
                  base: float) -> Optional[_Candidate]:
        n = normalize_field(key, text, self.today)
        factor = _plausible(key, n, method)
        if factor is None:
            return None
        rank = min(self.rank[li] for li in lines)
        sources = tuple(dict.fromkeys(self.source[li] for li in lines))
        return _Candidate(key, base * factor, rank, RuleMatch(key, text, sources, round(base * factor, 4), method, n))


# ---------------------------------------------------------------------------------------------------------------------
# Role resolution for bare labels


def _role_of_line(doc: _Doc, li: int, before: Optional[int] = None) -> Optional[str]:
    """Role of the last role-bearing label in line ``li`` (before compact position ``before``: then role words
    inside sentences count too)."""
    role = None
    for o in (doc.all_occ[li] if before is not None else doc.occ[li]):
        if before is not None and o.start >= before:
            break
        if o.label.role is not None:
            role = o.label.role
    return role


def _is_role_only(doc: _Doc, li: int) -> bool:
    occ = doc.occ[li]
    return (len(occ) == 1 and occ[0].label.role is not None and occ[0].start == 0
            and occ[0].value_start >= len(doc.lines[li].comp))


def _resolve_role(doc: _Doc, o: _Occ) -> tuple[Optional[str], bool]:
    """Role in force at a bare label: ``(role, near)``; ``near`` when it came from the same line or row
    (or a merged cell to the left) rather than from earlier lines."""
    line = doc.lines[o.line]
    role = _role_of_line(doc, o.line, o.start)
    if role:
        return role, True
    prev = doc.paragraph_prev(o.line)
    if prev is not None:  # …，投保 / 人通讯地址：…，联系电话：…
        roles = [LABELS[m.group()].role for m in _LABEL_RE.finditer(doc.lines[prev].comp + line.comp[:o.start])]
        roles = [r for r in roles if r is not None]
        if roles:
            return roles[-1], True
    lefts = sorted((ln for ln in doc.live if ln is not line and doc.same_row(line, ln) and ln.x1 <= line.x0 + 1),
                   key=lambda ln: -ln.x1)
    for ln in lefts:
        role = _role_of_line(doc, ln.index)
        if role:
            return role, True
    # a merged row-header cell (投保人 spanning several table rows): left of the whole row, a row of its own with
    # content to its right (a section title stands alone on its row)
    row_x0 = min([line.x0] + [ln.x0 for ln in doc.live if doc.same_row(line, ln)])
    merged = [ln for ln in doc.live if ln.page == line.page and ln.x1 <= row_x0 + 1 and _is_role_only(doc, ln.index)
              and abs(ln.cy - line.cy) <= 4 * line.height
              and any(other is not ln and doc.same_row(ln, other) and other.x0 >= ln.x1 - 1 for other in doc.live)]
    if merged:
        nearest = min(merged, key=lambda ln: abs(ln.cy - line.cy))
        return _role_of_line(doc, nearest.index), True
    for r in range(doc.rank[o.line] - 1, -1, -1):
        li = doc.order[r]
        if doc.lines[li].page != line.page:
            break
        role = _role_of_line(doc, li)
        if role:
            return role, False
    return None, False


# ---------------------------------------------------------------------------------------------------------------------
# Strategy 1: labels

_SCORE_LABEL_SEPARATED = 0.9
_SCORE_LABEL_PLAIN = 0.75
_SCORE_RIGHT = 0.85
_SCORE_BELOW = 0.75
_SCORE_NARRATIVE = 0.92  # above bare labels inside the sentence, whose role may be misread
_SCORE_SPLIT_LABEL = 0.7
_SCORE_PATTERN = 0.45


def _occ_fields(doc: _Doc, o: _Occ) -> tuple[tuple[str, ...], float]:
    """Fields a label occurrence introduces and a score factor (bare labels resolved by context)."""
    label = o.label
    if label.kind in ("field", "period"):
        return label.fields, 1.0
    if label.kind != "attr":
        return (), 0.0
    attr = label.attr or ""
    role, near = _resolve_role(doc, o)
    if role == "other":
        return (), 0.0
    field = ROLE_FIELDS.get((role, attr)) if role else None
    if field:
        return (field,), (0.95 if near else 0.85)
    if role == "beneficiary" and attr == "id":
        return (_UNSURE_ID,), 0.5  # no beneficiary ID field: it may still be the insured's, printed beside
    if near and role is not None:
        return (), 0.0  # e.g. 被保险人联系电话: not a field of ours
    # unqualified 联系电话 / 通讯地址 belong to the policyholder (DESIGN §5); an ID of unknown role is resolved at the
    # end (:func:`_assign_unsure_ids`)
    fallback = {"phone": ("policyholder_phone", 0.75), "address": ("policyholder_address", 0.75),
                "id": (_UNSURE_ID, 0.6)}
    if attr not in fallback:
        return (), 0.0
    key, factor = fallback[attr]
    return (key,), factor * (1.0 if role is None else 0.8)


_UNSURE_ID = "_unsure_id"  # pseudo key: an ID number whose owner is unknown
_Segments = tuple[tuple[int, int, int], ...]
_CONTINUABLE = ("amount", "date", "id_number", "phone", "text")


def _value_sites(doc: _Doc, o: _Occ) -> list[tuple[_Segments, _Segments, str, float]]:
    """Where the value of a label may be: ``(segments, continuation, method, base score)``; segments are compact
    spans ``(line, start, end)``; ``continuation`` is the next line of a wrapped paragraph (for short values)."""
    line = doc.lines[o.line]
    end = doc.value_end(o.line, o.value_start)
    if o.value_start < end:
        separated = o.value_start > o.end
        return [_site(doc, o.line, o.value_start, "label", _SCORE_LABEL_SEPARATED if separated else _SCORE_LABEL_PLAIN)]
    if end < len(line.comp):
        return []  # another label follows immediately: this one's value is empty
    # a label at the end of a wrapped paragraph line: the value opens the next line (a label box ending in ':'
    # counts as wrapped only when nothing stands to its right)
    right = doc.right_of(line)
    if right is not None and (doc.starts_with_label(right.index) or _in_header_row(doc, line)):
        right = None
    nxt = doc.continuation(line.index, joiners=False)
    if nxt is None and right is None:
        nxt = doc.continuation(line.index)
    if nxt is not None:
        start, _ = _skip_connectors(doc.lines[nxt].comp, 0)
        end = doc.value_end(nxt, start)
        if start < end:
            return [(((nxt, start, end),), (), "label", _SCORE_LABEL_PLAIN)]
    sites: list[tuple[_Segments, _Segments, str, float]] = []
    x0, x1 = _x_at(line, o.start), line.x1
    for other, method, score in ((right, "label_right", _SCORE_RIGHT),
                                 (doc.below(line, x0, x1), "label_below", _SCORE_BELOW)):
        if other is not None and not doc.starts_with_label(other.index):
            sites.append(_site(doc, other.index, 0, method, score))
    return sites


def _site(doc: _Doc, li: int, start: int, method: str, score: float) -> tuple[_Segments, _Segments, str, float]:
    """A value from ``start`` to the next label of line ``li``, plus the wrapped continuation when it runs to the
    end of the line."""
    end = doc.value_end(li, start)
    nxt = doc.continuation(li) if end == len(doc.lines[li].comp) else None
    cont: _Segments = ((nxt, 0, doc.value_end(nxt, 0)),) if nxt is not None else ()
    return ((li, start, end),), cont, method, score


def _in_header_row(doc: _Doc, line: _Line) -> bool:
    """A header row of a column table: other label boxes on the row, and under the row a row of several values
    (no labels) lying under this box and under another label box."""
    others = []
    for other in doc.live:
        if other is line or not doc.same_row(line, other) or not doc.occ[other.index]:
            continue
        o = doc.occ[other.index][0]
        if o.start <= _line_start(other.comp) and doc.value_end(other.index, o.value_start) <= o.value_start:
            others.append(other)
    if not others:
        return False
    under = [ln for ln in doc.live if ln.page == line.page and ln.cy > line.y1
             and ln.y0 - line.y1 <= 2.0 * line.height]
    if not under:
        return False
    top = min(under, key=lambda ln: ln.y0)
    row = [ln for ln in under if doc.same_row(ln, top)]
    headers = [ln for ln in doc.live if ln is line or doc.same_row(ln, line)]
    if len(row) < 2 or len(row) != len(headers) or any(doc.starts_with_label(ln.index) for ln in row):
        return False

    def covered(box: _Line) -> bool:
        return any(min(ln.x1, box.x1) - max(ln.x0, box.x0) > 0.3 * min(ln.x1 - ln.x0, box.x1 - box.x0) for ln in row)

    return covered(line) and any(covered(o) for o in others)


def _same_as_policyholder(doc: _Doc, segments: _Segments) -> bool:
    li, cs, ce = segments[0]
    if ce <= cs:
        return False
    line = doc.lines[li]
    n0, n1 = _norm_pos(line, cs), line.comp_to_norm[ce - 1] + 1
    s, e = _strip(line.norm, n0, n1)
    text = re.sub(r"\s+", "", line.norm[s:e])
    return any(text.startswith(w) for w in SAME_AS_POLICYHOLDER)


def _label_candidates(doc: _Doc) -> tuple[list[_Candidate], set[str]]:
    out: list[_Candidate] = []
    same_as: set[str] = set()
    for occs in doc.occ:
        for o in occs:
            fields, factor = _occ_fields(doc, o)
            if not fields:
                continue
            for segments, cont, method, base in _value_sites(doc, o):
                if o.label.kind == "period":
                    if method != "label":  # a value box: the period may be split into touching boxes
                        segments = doc.row_run(segments)
                    out.extend(_period_candidates(doc, segments + cont, method, base * factor))
                    continue
                for key in fields:
                    if key in ("insured_name", "insured_id_number") and _same_as_policyholder(doc, segments):
                        same_as.add(key)
                        continue
                    real = "policyholder_id_number" if key == _UNSURE_ID else key
                    wrapped = cont and FIELDS[real].kind in _CONTINUABLE
                    if real == "policyholder_address" and not cont:
                        cont = doc.cell_tail(segments[-1])
                        wrapped = bool(cont)
                    c = doc.make_segments(real, segments + cont if wrapped else segments, method, base * factor)
                    if c is not None:
                        out.append(_retarget(c, _UNSURE_ID) if key == _UNSURE_ID else c)
    return out, same_as


def _period_candidates(doc: _Doc, segments: _Segments, method: str, base: float) -> list[_Candidate]:
    """``保险期间: 自<date>零时起至<date>二十四时止`` -> effective and expiry candidates."""
    text = "".join(doc.lines[li].comp[cs:ce] for li, cs, ce in segments)
    spans = date_spans(text)
    keys: tuple[str, ...] = ("effective_date", "expiry_date")
    if spans and (re.search(r"(?:至|到|止于)$", text[:spans[0][0]])
                  or (len(spans) == 1 and text[:spans[0][0]] in ("-", "~", "—", "至"))):
        keys = ("expiry_date",)  # 保险期间至<date>, or the second half of a period split across boxes
    out = []
    for key, (s, e) in zip(keys, spans[:2]):
        c = doc.make_segments(key, _sub_segments(segments, s, e), method, base)
        if c is not None:
            out.append(c)
    return out


def _sub_segments(segments: _Segments, s: int, e: int) -> _Segments:
    """The part ``[s, e)`` of the concatenation of compact segments, as segments."""
    out = []
    offset = 0
    for li, cs, ce in segments:
        length = ce - cs
        a, b = max(s - offset, 0), min(e - offset, length)
        if a < b:
            out.append((li, cs + a, cs + b))
        offset += length
    return tuple(out)


# ---------------------------------------------------------------------------------------------------------------------
# Strategy 2: narrative sentences over the text of all lines joined in reading order

_NAME_PAT = r"[\u4e00-\u9fff·]{2,6}?"
_ID_LABEL_PAT = r"(?:身份证号码|身份证号|身份证件号码|身份证|证件号码|证件号)"
# (身份证号码：…) / (被保险人公民身份号码：…): any short label ending in an ID word
_ID_IN_PARENS = (rf"\((?:[\u4e00-\u9fff]{{0,4}}?{_ID_LABEL_PAT}|[\u4e00-\u9fff]{{0,12}}?(?:号码|证号)):?"
                 rf"(?P<id>[0-9XxOoDlI|]{{17,18}})(?=[,;)])[^()]*\)")
_NARRATIVE_PATTERNS: dict[str, re.Pattern[str]] = {
    "policyholder": re.compile(
        rf"投保人(?P<name>{_NAME_PAT})(?:{_ID_IN_PARENS})?"
        r"(?=以|为|向|,|;|。|于|就|已|作为|与|在|同意|自愿|申请|\()"),
    "insured": re.compile(rf"以(?P<name>{_NAME_PAT})(?:{_ID_IN_PARENS})?为被保险人"),
    "product": re.compile(
        r"(?:向|在)(?:本公司|我公司|本司|我司)?投保(?:了)?(?P<name>[\u4e00-\u9fffA-Za-z0-9()·]{2,30}?(?:保险|险)"
        r"(?:\([\u4e00-\u9fff0-9]{1,10}\))?(?:[A-Z]款)?)(?=[,;。\x00]|$)"),
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
class _Joined:
    text: str
    line_of: tuple[int, ...]  # per character: prepared line index
    pos_of: tuple[int, ...]  # per character: compact position in that line


_BREAK = "\x00"  # between lines that are not one wrapped paragraph: nothing matches across it


def _join(doc: _Doc) -> _Joined:
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
    return _Joined("".join(text), tuple(line_of), tuple(pos_of))


def _joined_candidate(doc: _Doc, j: _Joined, key: str, s: int, e: int, base: float) -> Optional[_Candidate]:
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
    return doc.make_segments(key, tuple(segments), "narrative", base) if segments else None


def _split_label_candidates(doc: _Doc, j: _Joined) -> list[_Candidate]:
    """Labels broken across the lines of a wrapped paragraph (``…，保`` / ``险金额为人民币…``)."""
    out: list[_Candidate] = []
    matches = list(_LABEL_RE.finditer(j.text))
    for n, m in enumerate(matches):
        s, e = m.span()
        label = LABELS[m.group()]
        if j.line_of[s] == j.line_of[e - 1] or label.kind not in ("field", "period", "attr"):
            continue
        value_start, separated = _skip_connectors(j.text, e)
        if not separated and not (s > 0 and j.text[s - 1] in _PUNCT):
            continue
        end = matches[n + 1].start() if n + 1 < len(matches) else len(j.text)
        fields = label.fields
        if label.kind == "attr":
            probe = _Occ(j.line_of[s], j.pos_of[s], j.pos_of[s], label, True, j.pos_of[s])
            fields = tuple(k for k in _occ_fields(doc, probe)[0] if k != _UNSURE_ID)
        for key in fields:
            if label.kind == "period":
                spans = date_spans(j.text[value_start:end])
                for k, (a, b) in zip(label.fields, spans[:2]):
                    c = _joined_candidate(doc, j, k, value_start + a, value_start + b, _SCORE_SPLIT_LABEL)
                    if c is not None:
                        out.append(c)
                break
            c = _joined_candidate(doc, j, key, value_start, end, _SCORE_SPLIT_LABEL)
            if c is not None:
                out.append(c)
    return out


def _narrative_candidates(doc: _Doc, j: _Joined) -> list[_Candidate]:
    out: list[_Candidate] = _split_label_candidates(doc, j)
    for role, pattern in _NARRATIVE_PATTERNS.items():
        name_key, id_key = _NARRATIVE_FIELDS[role]
        for m in pattern.finditer(j.text):
            for key, group in ((name_key, "name"), (id_key, "id")):
                if key is None or m.group(group) is None:
                    continue
                c = _joined_candidate(doc, j, key, m.start(group), m.end(group), _SCORE_NARRATIVE)
                if c is not None:
                    out.append(c)
    spans = date_spans(j.text)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        if _BETWEEN_DATES_RE.match(j.text[e1:s2]):
            for key, (s, e) in (("effective_date", (s1, e1)), ("expiry_date", (s2, e2))):
                c = _joined_candidate(doc, j, key, s, e, _SCORE_NARRATIVE - 0.15)
                if c is not None:
                    out.append(c)
    for s, e in spans:
        tail = j.text[e:e + 8]
        key = ("effective_date" if _AFTER_START_RE.match(tail) else
               "expiry_date" if _AFTER_END_RE.match(tail) else None)
        if key is not None:
            c = _joined_candidate(doc, j, key, s, e, _SCORE_NARRATIVE - 0.2)
            if c is not None:
                out.append(c)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Strategy 3: field-shaped patterns

_ID_PATTERN = re.compile(r"(?<![0-9A-Za-z])\d(?: ?\d){16} ?[\dXx](?![0-9A-Za-z])")
_MOBILE_PATTERN = re.compile(r"(?<![\d])(?:\+?86[\s-]?)?1[3-9]\d(?:[\s-]?\d){8}(?!\d)")
_DISTRACTOR_WORDS = ("客服", "热线", "服务电话", "咨询", "投诉", "代理人", "业务员", "营销员", "经办人", "客户经理",
                     "公司", "传真", "网址", "工号", "销售人员", "服务人员")
_INSURER_PATTERN = re.compile(
    r"[\u4e00-\u9fff()]{2,24}?(?:保险|人寿|财产|养老|健康)[\u4e00-\u9fff()]{0,16}?"
    r"(?:股份有限公司|有限责任公司|有限公司|保险公司)")
_PRODUCT_PATTERN = re.compile(r"^[\u4e00-\u9fffA-Za-z0-9()·]{2,30}?(?:保险|寿险|险)(?:\([\u4e00-\u9fff]{1,10}\))?$")
_DATE_CONTEXT: dict[str, tuple[str, ...]] = {
    "effective_date": ("生效", "起保", "起期"),
    "expiry_date": ("满期", "到期", "终止", "止期", "期满"),
    "issue_date": ("签单", "签发", "出单"),
}


def _pattern_candidates(doc: _Doc) -> list[_Candidate]:
    out: list[_Candidate] = []
    unknown_ids: list[tuple[int, int, int]] = []
    for li in doc.order:
        line = doc.lines[li]
        for m in _ID_PATTERN.finditer(line.norm):
            cs, ce = _comp_pos(line, m.start()), _comp_pos(line, m.end())
            probe = _Occ(li, cs, cs, LabelDef("", "attr", attr="id"), True, cs)
            role, _ = _resolve_role(doc, probe)
            if role in ("policyholder", "insured"):
                key = ROLE_FIELDS[(role, "id")]
                c = doc.make(key, li, cs, ce, "pattern", _SCORE_PATTERN)
                if c is not None:
                    out.append(c)
            elif role is None:
                unknown_ids.append((li, cs, ce))
        if not any(w in line.comp for w in _DISTRACTOR_WORDS):
            for m in _MOBILE_PATTERN.finditer(line.norm):
                cs = _comp_pos(line, m.start())
                probe = _Occ(li, cs, cs, LabelDef("", "attr", attr="phone"), True, cs)
                if _resolve_role(doc, probe)[0] in ("policyholder", None):
                    c = doc.candidate("policyholder_phone", _raw_text(line, m.start(), m.end()), (li,), "pattern",
                                      _SCORE_PATTERN)
                    if c is not None:
                        out.append(c)
        for key, words in _DATE_CONTEXT.items():
            if any(w in line.comp for w in words):
                spans = date_spans(line.norm)
                if len(spans) == 1:
                    s, e = spans[0]
                    c = doc.candidate(key, _raw_text(line, s, e), (li,), "pattern", _SCORE_PATTERN)
                    if c is not None:
                        out.append(c)
    for li, s, e in unknown_ids:
        c = doc.make("policyholder_id_number", li, s, e, "pattern", _SCORE_PATTERN * 0.8)
        if c is not None:
            out.append(_retarget(c, _UNSURE_ID))
    out.extend(_company_and_product(doc))
    return out


def _company_and_product(doc: _Doc) -> list[_Candidate]:
    out: list[_Candidate] = []
    for r, li in enumerate(doc.order):
        comp = doc.lines[li].comp
        if any(w in comp for w in ("地址", "电话", "热线", "本公司", "以下简称")):
            continue
        m = _INSURER_PATTERN.search(comp)
        if m is not None:
            c = doc.make("insurer", li, m.start(), m.end(), "pattern", _SCORE_PATTERN * (1.0 - 0.01 * min(r, 30)))
            if c is not None:
                out.append(c)
        if (_PRODUCT_PATTERN.match(comp) and len(comp) >= 5 and not comp.endswith("财险")
                and not any(w in comp for w in ("公司", "保险单", "保单", "条款", "须知", "声明", "投保单", "合同"))):
            c = doc.make("product_name", li, 0, len(comp), "pattern", _SCORE_PATTERN * 0.8)
            if c is not None:
                out.append(c)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Strategy 4: labels outside the lexicon (``保障额度：``, ``要保人``) fill fields still empty

_SCORE_UNKNOWN = 0.6  # times the site's base score: above bare patterns, below every known label
_MIN_SIMILARITY = 0.2
_ROLE_PREFIX_BONUS = 0.5
_UNKNOWN_RUN_RE = re.compile(r"[\u4e00-\u9fff]{2,10}(?:\([\u4e00-\u9fff]{1,6}\))?")
_NAME_KINDS = ("name", "beneficiary")
# distractors that only say "a number": 保单编号 is the policy's, 代理人编号 the agent's (the rest of the label decides)
_IDENTIFIER_WORDS = ("编号", "编码", "代码")


def _labels_by_field() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {key: [] for key in FIELD_KEYS}
    for text, d in LABELS.items():
        if d.kind == "field":
            for key in d.fields:
                out[key].append(text)
    out["_period"] = list(PERIOD_LABELS)
    return {key: tuple(texts) for key, texts in out.items()}


_LABELS_BY_FIELD = _labels_by_field()
_MIN_LABEL_LIKENESS = 0.3


def _label_likeness(text: str) -> float:
    return max(field_similarities(text, _LABELS_BY_FIELD).values())


@dataclass(frozen=True)
class _Unknown:
    occ: _Occ
    text: str  # the label as printed, compact
    glued: bool = False  # no separator: the value follows the label in the same run (要保人苏蕾丹)

    @property
    def site_key(self) -> tuple[int, int]:
        """Where the label starts; the readings of one glued run share it (only one of them is used)."""
        return self.occ.line, self.occ.start


def _known_label_ends(doc: _Doc, li: int, s: int, e: int, strong_only: bool) -> bool:
    """A known label ends at ``e`` (starting at or after ``s``): the label pass reads it, or it is someone's
    职业, 性别 (a distractor; identifier words such as 编号 defer to the rest of the label)."""
    for o in (doc.occ[li] if strong_only else doc.all_occ[li]):
        if o.end != e or o.start < s:
            continue
        if o.label.kind in ("field", "period") or (o.label.kind == "attr" and o in doc.occ[li]):
            return True
        if o.label.kind == "distractor" and (o.start == s or o.label.text not in _IDENTIFIER_WORDS):
            return True
    return False


def _unknown_label_text_ok(text: str) -> bool:
    if text in LABELS or text.endswith(SECTION_SUFFIXES) or any(w in text for w in _DISTRACTOR_WORDS):
        return False
    return not any(role == "other" and w in text for w, role in ROLE_WORDS.items())


def _unknown_labels(doc: _Doc) -> list[_Unknown]:
    """Label-like runs the lexicon does not know: a CJK run opening a line (or following a gap or punctuation)
    and ending in a colon or leaders; a short line that is nothing but such a run (a table header, a label box)
    with a value box to its right or below; or, at a line start without any separator, every split of the run
    into a label of 2-8 characters and a glued value (the similarity then picks the split)."""
    out: list[_Unknown] = []
    for li in doc.order:
        line = doc.lines[li]
        comp = line.comp
        line_start = _line_start(comp)
        for m in _UNKNOWN_RUN_RE.finditer(comp):
            s, e = m.span()
            if s > line_start and comp[s - 1] not in _PUNCT and line.comp_to_norm[s] - line.comp_to_norm[s - 1] <= 1:
                continue  # inside running text
            value_start, separated = _label_box_end(comp, s, e, *_skip_connectors(comp, e))
            whole_line = s <= line_start and e == len(comp) and e - s <= 10
            text = comp[s:e]
            if (separated or whole_line) and _unknown_label_text_ok(text) and not (
                    not separated and _label_likeness(text) < _MIN_LABEL_LIKENESS) and not _known_label_ends(
                    doc, li, s, e, strong_only=False):
                out.append(_Unknown(_Occ(li, s, e, LabelDef(text, "field"), True, value_start), text))
            opened = any(o.start <= s and (o.label.kind != "distractor" or o.value_start > o.end) for o in doc.occ[li])
            if separated or s > line_start or opened:
                continue  # a known label opens the line (a distractor only when a separator follows: 保险责任起始日…)
            for k in range(s + 2, min(s + 9, len(comp))):
                text = comp[s:k]
                if _unknown_label_text_ok(text) and not _known_label_ends(doc, li, s, k, strong_only=True):
                    out.append(_Unknown(_Occ(li, s, k, LabelDef(text, "field"), True, k), text, glued=True))
    return out


_GLUED_KINDS = ("name", "beneficiary", "id_number", "phone", "date", "amount", "code")
_KEY_ROLE: dict[str, str] = {key: role for (role, _), key in ROLE_FIELDS.items()}
_KEY_ROLE.update({key: role for role, key in ROLE_NAME_FIELDS.items()})


def _explicit_role(text: str) -> Optional[str]:
    """The role a label names with a known role word (投保人公民身份号码 -> policyholder), if exactly one."""
    roles = {role for word, role in ROLE_WORDS.items() if word in text and role != "other"}
    return roles.pop() if len(roles) == 1 else None


_PERSON_LABEL_ENDS = ("人", "姓名", "名称")  # 要保人, 受益人, 投保人姓名
_GLUED_PRODUCT_SIMILARITY = 0.6


def _glued_ok(text: str, key: str) -> bool:
    """May a glued label introduce ``key``? Only values of a distinct shape; a person's name only after a label
    that names a person (ends in 人, 姓名, 名称), or ``保险凭证`` would read as 保险 + a name 凭证; a product only
    after a label very like a product label (投保险种; 保险计划 is as like 保险人 and 保险费)."""
    if key == "product_name":
        return field_similarities(text, {key: _LABELS_BY_FIELD[key]})[key] >= _GLUED_PRODUCT_SIMILARITY
    if key not in FIELDS or not (FIELDS[key].kind in _GLUED_KINDS or key == "policyholder_address"):
        return False
    return FIELDS[key].kind not in _NAME_KINDS or text.endswith(_PERSON_LABEL_ENDS)


def _unknown_label_candidates(doc: _Doc, filled: Mapping[str, _Candidate]) -> list[_Candidate]:
    """Candidates for still-empty fields from labels outside the lexicon.

    Each unknown label is compared with the known labels of every empty field (:mod:`label_similarity`); its value
    must fit the field's shape. Pairs are taken greedily, most similar first, then in reading order, so two unknown
    person labels fill the policyholder before the insured; names go first, and an unknown label that starts with an
    unknown name label already placed (``要保人`` → ``要保人证件号码``) follows that person's role. A glued label
    (no separator) may only introduce a value of a distinct shape (a name, number, date, amount or address).
    """
    taken = {(c.match.line_indices, c.match.value) for c in filled.values()}
    unknowns = _unknown_labels(doc)
    label_lines = {u.occ.line for u in unknowns
                   if not u.glued and u.occ.start == _line_start(doc.lines[u.occ.line].comp)}
    sites = {id(u): [site for site in _value_sites(doc, u.occ) if site[0][0][0] == u.occ.line
                     or site[0][0][0] not in label_lines] for u in unknowns}
    out: list[_Candidate] = []
    used: set[tuple[int, int]] = set()
    cells = [o for occs in doc.occ for o in occs if o.label.kind != "period"
             and o.start <= _line_start(doc.lines[o.line].comp) and o.value_start >= len(doc.lines[o.line].comp)
             and _value_sites(doc, o)]
    named = {key for o in cells for key in _occ_fields(doc, o)[0]}
    # a field whose own (known) label is a label cell with a value box beside or under it is not given to a label
    # outside the lexicon (a period label is not counted: it may hold a duration such as 1年)
    empty = [key for key in FIELD_KEYS if key not in filled and key not in named]
    prefix_role: dict[str, str] = {}
    for phase in ("names", "rest"):
        pairs: list[tuple[bool, float, int, int, _Unknown, str, list[_Candidate]]] = []
        keys = [k for k in empty + ["_period"] if (FIELDS[k].kind in _NAME_KINDS if k in FIELDS else False)
                == (phase == "names")]
        for u in unknowns:
            if u.site_key in used:
                continue
            role = _explicit_role(u.text)
            allowed = [k for k in keys if (not u.glued or _glued_ok(u.text, k))
                       and (role is None or _KEY_ROLE.get(k) in (None, role))]
            sims = field_similarities(u.text, {k: _LABELS_BY_FIELD[k] for k in allowed})
            for prefix, prefix_owner in prefix_role.items():
                if u.text.startswith(prefix) and u.text != prefix:
                    for attr in ATTR_WORDS:
                        key = ROLE_FIELDS.get((prefix_owner, attr))
                        if key in sims:
                            sims[key] += _ROLE_PREFIX_BONUS
            for key, sim in sims.items():
                if sim < _MIN_SIMILARITY:
                    continue
                cands = _unknown_site_candidates(doc, key, sites[id(u)], sim)
                if cands and not any((c.match.line_indices, c.match.value) in taken for c in cands):
                    order = FIELD_KEYS.index(key) if key in FIELDS else len(FIELD_KEYS)
                    pairs.append((role is None, -round(sim, 2), doc.rank[u.occ.line], order, u, key, cands))
        pairs.sort(key=lambda p: p[:4])  # labels that name a known role (投保人公民身份号码) first
        done: set[str] = set()
        for _, _, _, _, u, key, cands in pairs:
            if u.site_key in used or key in done or (key == "_period" and {"effective_date", "expiry_date"} & done):
                continue
            used.add(u.site_key)
            done.update([key] if key != "_period" else [c.key for c in cands])
            out.extend(cands)
            if phase == "names" and key in _KEY_ROLE:
                prefix_role[u.text] = _KEY_ROLE[key]
        empty = [k for k in empty if k not in done]
    return out


def _unknown_site_candidates(doc: _Doc, key: str, sites: list[tuple[_Segments, _Segments, str, float]],
                             sim: float) -> list[_Candidate]:
    """The first site whose value fits ``key`` (a period label: the dates of the first site holding any)."""
    factor = _SCORE_UNKNOWN * min(1.0, 0.5 + sim)
    for segments, cont, method, base in sites:
        if key == "_period":
            found = _period_candidates(doc, segments + cont, "unknown_label", base * factor)
            if found:
                return found
            continue
        wrapped = cont and FIELDS[key].kind in _CONTINUABLE
        c = doc.make_segments(key, segments + cont if wrapped else segments, "unknown_label", base * factor)
        if c is not None and FIELDS[key].kind == "amount" and any(
                _CJK_RE.match(ch) and ch not in _AMOUNT_CHARS for ch in c.match.text):
            c = None  # 智选住院医疗保险(2024版) is no amount, however it parses
        if c is not None and FIELDS[key].kind == "phone" and c.match.normalized.issues:
            c = None  # a label outside the lexicon is weak evidence: only a well-formed number is a phone
        if c is not None:
            return [c]
    return []


# ---------------------------------------------------------------------------------------------------------------------
# Entry point


def _drop_contradicted(cands: list[_Candidate]) -> list[_Candidate]:
    """A sentence that says whose ID/name a span is (``以李四（身份证号码：…）为被保险人``) overrules a role guessed
    from context for the same span."""
    claims: dict[tuple[tuple[int, ...], Optional[str]], str] = {}
    for c in cands:
        if c.match.method == "narrative" and FIELDS[c.key].kind in ("id_number", "name"):
            claims[(c.match.line_indices, c.match.value)] = c.key
    out = []
    for c in cands:
        owner = claims.get((c.match.line_indices, c.match.value))
        if owner is not None and owner != c.key and c.match.method != "narrative" and c.key != _UNSURE_ID:
            continue
        out.append(c)
    return out


def _retarget(c: _Candidate, key: str, factor: float = 1.0) -> _Candidate:
    m = c.match
    score = round(c.score * factor, 4)
    return _Candidate(key, score, c.order, RuleMatch(key if not key.startswith("_") else m.key, m.text,
                                                     m.line_indices, score, m.method, m.normalized))


def _assign_unsure_ids(best: dict[str, _Candidate], unsure: Iterable[_Candidate]) -> None:
    """IDs of unknown owner fill the policyholder's ID, else (when different from it) the insured's."""
    for c in sorted(unsure, key=lambda c: (-c.score, c.order)):
        ph = best.get("policyholder_id_number")
        if ph is None:
            best["policyholder_id_number"] = _retarget(c, "policyholder_id_number")
        elif ph.match.value != c.match.value and "insured_id_number" not in best:
            best["insured_id_number"] = _retarget(c, "insured_id_number")


def _best(cands: Iterable[_Candidate]) -> dict[str, _Candidate]:
    best: dict[str, _Candidate] = {}
    for c in cands:
        cur = best.get(c.key)
        if cur is None or (c.score, -c.order) > (cur.score, -cur.order):
            best[c.key] = c
    return best


def extract_rules(lines: Sequence[OcrLineLike], today: date) -> dict[str, Optional[RuleMatch]]:
    """Find every field of :data:`stages.extraction.fields.FIELDS` in one document's OCR lines.

    ``lines`` may come from several pages (``page`` attribute); line indices in the result refer to ``lines``.
    Returns every field key in registry order; ``None`` where nothing plausible was found.
    """
    doc = _Doc(lines, today)
    label_cands, same_as = _label_candidates(doc)
    cands = label_cands + _narrative_candidates(doc, _join(doc)) + _pattern_candidates(doc)
    cands = _drop_contradicted(cands)
    labelled = _best(c for c in cands if c.key != _UNSURE_ID and c.match.method != "pattern")
    cands += _unknown_label_candidates(doc, labelled)
    best = _best(c for c in cands if c.key != _UNSURE_ID)
    _assign_unsure_ids(best, (c for c in cands if c.key == _UNSURE_ID))
    for key in sorted(same_as):
        source = best.get(key.replace("insured", "policyholder"))
        if key not in best and source is not None:
            m = source.match
            best[key] = _Candidate(key, source.score * 0.95, source.order,
                                   RuleMatch(key, m.text, m.line_indices, round(m.score * 0.95, 4),
                                             "same_as_policyholder", m.normalized))
    return {key: (_with_rivals(best[key], cands) if key in best else None) for key in FIELD_KEYS}


def _with_rivals(chosen: _Candidate, cands: Sequence[_Candidate]) -> RuleMatch:
    """The chosen match with the number of candidates for its key that carry another value, and the score margin."""
    others = [c.score for c in cands if c.key == chosen.key and c.match.value != chosen.match.value]
    margin = chosen.score - max(others) if others else 1.0
    return replace(chosen.match, rivals=len(others), margin=round(margin, 4))
