"""The label lexicon: field labels, role and attribute words, distractors; every label text and what it introduces."""
from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from typing import Collection, Mapping, Optional

from stages.contracts.fields import FIELD_KEYS


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
    learned: bool = False  # a wording learned from reviewers' corrections (an adapted folder), not a shipped one


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
ALL_ATTR_WORDS: tuple[str, ...] = tuple(w for words in ATTR_WORDS.values() for w in words)  # of every attribute

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


# words that may stand before a bare attribute label (居住地址, 本人电话); any other word there (服务地址, 客户姓名)
# makes it someone else's attribute
ATTR_QUALIFIERS = ("居住", "常住", "现", "现居", "现住", "本人", "个人", "有效", "常用", "户籍")

# words that make a line (or an unknown label) someone else's: the company's, an agent's
DISTRACTOR_WORDS = ("客服", "热线", "服务电话", "咨询", "投诉", "代理人", "业务员", "营销员", "经办人", "客户经理",
                    "公司", "传真", "网址", "工号", "销售人员", "服务人员")


# what a date label says about its date (for labels outside the lexicon: 保障开始日, 合同结束日期, 保单填发日期);
# a label with words of both the start and the end (起止日期) names the whole period
DATE_LABEL_ENDS = ("日期", "日", "时间", "时", "期")
DATE_MEANING_WORDS: dict[str, tuple[str, ...]] = {
    "effective_date": ("生效", "开始", "起"),
    "expiry_date": ("满期", "期满", "终止", "结束", "届满", "截止", "止"),
    "issue_date": ("签发", "签单", "签", "出单", "填发", "开具", "成立"),
}


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


@dataclass(frozen=True)
class Lexicon:
    """The label texts the rules know: their definitions, the pattern that finds them (longest first) and each
    field's label texts (what a label outside the lexicon is compared with)."""

    labels: Mapping[str, LabelDef]
    pattern: re.Pattern
    by_field: Mapping[str, tuple[str, ...]]
    wordings: tuple[str, ...]  # every field's label texts, sorted and each once (what a value's edges are compared with)


_ALL_LABELS: Mapping[str, LabelDef] = _build_labels()


def build_lexicon(withheld: Collection[str] = ()) -> Lexicon:
    """The lexicon without the label texts in ``withheld``."""
    gone = frozenset(withheld)
    return _lexicon({t: d for t, d in _ALL_LABELS.items() if t not in gone}, gone)


def _lexicon(labels: Mapping[str, LabelDef], gone: Collection[str] = ()) -> Lexicon:
    pattern = re.compile("|".join(re.escape(t) for t in sorted(labels, key=len, reverse=True)))
    by_field: dict[str, list[str]] = {key: [] for key in FIELD_KEYS}
    for text, d in labels.items():
        if d.kind == "field":
            for key in d.fields:
                by_field[key].append(text)
    by_field["_period"] = [t for t in PERIOD_LABELS if t not in gone]
    wordings = tuple(sorted({t for texts in by_field.values() for t in texts}))
    return Lexicon(labels, pattern, {key: tuple(texts) for key, texts in by_field.items()}, wordings)


FULL_LEXICON = build_lexicon()
LABELS: Mapping[str, LabelDef] = FULL_LEXICON.labels
LABEL_RE = FULL_LEXICON.pattern


@dataclass(frozen=True)
class LabelWithholding:
    """A measurement setting, never a product one: the rules forget ``fraction`` of their label texts, drawn per
    document from ``seed`` (``docpipe eval --withhold-labels F --withhold-seed S``); 0 = off."""

    fraction: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.fraction < 1.0:
            raise ValueError(f"withheld fraction must be in [0, 1), got {self.fraction}")


def withheld_lexicon(fraction: float, seed: int, document_key: str) -> Lexicon:
    """The lexicon less a random ``fraction`` of its label texts, drawn per document (from ``seed`` and a key of the
    document's text): the rules then meet wordings they were never given, as on an insurer's new forms. Used to
    measure and calibrate that (:class:`LabelWithholding`), never by default."""
    digest = hashlib.sha256(f"{seed}:{document_key}".encode("utf-8")).hexdigest()
    rng = random.Random(int(digest[:16], 16))
    texts = sorted(_ALL_LABELS)
    return build_lexicon(rng.sample(texts, int(round(fraction * len(texts)))))


# the role and attribute of each person field (a learned wording for a person's field carries them)
_FIELD_ROLE: dict[str, tuple[str, str]] = {key: (role, attr) for (role, attr), key in ROLE_FIELDS.items()}


def extend_lexicon(base: Lexicon, learned: Collection[tuple[str, str]]) -> Lexicon:
    """``base`` plus learned wordings ``(text, field key)`` as labels of their fields (``learned=True``).

    A wording for a person's field carries that person's role, as the shipped 投保人… labels do; one learned for
    several fields of one person (the role cell of a role table's row: left of the name, first in the ID's row) is
    that person's role word, a label of their name. A text ``base`` already has, or one learned for fields of
    different owners, is left out. No wordings: ``base`` itself."""
    fields_of: dict[str, set[str]] = {}
    for text, key in learned:
        if text and key in FIELD_KEYS and text not in base.labels:
            fields_of.setdefault(text, set()).add(key)
    added: dict[str, LabelDef] = {}
    for text, keys in sorted(fields_of.items()):
        roles = {_FIELD_ROLE[k][0] if k in _FIELD_ROLE else None for k in keys}
        if len(keys) == 1:
            key = next(iter(keys))
            role, attr = _FIELD_ROLE.get(key, (None, None))
            added[text] = LabelDef(text, "field", (key,), attr, role, learned=True)
        elif len(roles) == 1 and None not in roles:
            role = roles.pop()
            added[text] = LabelDef(text, "field", (ROLE_NAME_FIELDS[role],), "name", role, learned=True)
    if not added:
        return base
    gone = [t for t in PERIOD_LABELS if t not in base.by_field.get("_period", ())]
    return _lexicon({**base.labels, **added}, gone)
