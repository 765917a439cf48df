"""The field registry (DESIGN §5): every output key, its Chinese label, kind, normalizer and OCR charset."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Callable, Literal, Optional

from stages.postprocess import normalize as nz
from stages.postprocess.normalize import Normalized

FieldKind = Literal["code", "text", "name", "beneficiary", "id_number", "phone", "amount", "date"]
Normalizer = Callable[[str, date], Normalized]


@dataclass(frozen=True)
class FieldSpec:
    """One output field.

    ``normalizer(text, today)`` turns the text as read into the §5 value; ``charset`` is the set of characters
    the value may contain (for constrained CTC re-decoding), ``None`` for free text.
    """

    key: str
    label_zh: str
    kind: FieldKind
    normalizer: Normalizer
    required: bool
    charset: Optional[str]


def _unique(chars: str) -> str:
    return "".join(dict.fromkeys(chars))


DIGITS = "0123456789"
ID_CHARSET = DIGITS + "X"
PHONE_CHARSET = DIGITS + "-+() "
DATE_CHARSET = _unique(DIGITS + "年月日/-." + "〇零一二三四五六七八九十元" + "时起止")
AMOUNT_CHARSET = _unique(DIGITS + ",.¥￥万元整人民币" + nz.CAPITAL_NUMERALS + "（）()")


def _without_today(normalize: Callable[[str], Normalized]) -> Normalizer:
    """Adapt a normalizer that does not depend on the date to the registry's ``(text, today)`` signature."""
    def run(text: str, today: date) -> Normalized:
        return normalize(text)

    run.__name__ = normalize.__name__
    return run


NORMALIZERS: dict[FieldKind, Normalizer] = {
    "code": _without_today(nz.normalize_code),
    "text": _without_today(nz.normalize_text),
    "name": _without_today(nz.normalize_name),
    "beneficiary": _without_today(nz.normalize_beneficiary),
    "id_number": nz.normalize_id_number,
    "phone": _without_today(nz.normalize_phone),
    "amount": _without_today(nz.normalize_amount),
    "date": _without_today(nz.normalize_date),
}

CHARSETS: dict[FieldKind, Optional[str]] = {
    "code": None,
    "text": None,
    "name": None,
    "beneficiary": None,
    "id_number": ID_CHARSET,
    "phone": PHONE_CHARSET,
    "amount": AMOUNT_CHARSET,
    "date": DATE_CHARSET,
}


def _spec(key: str, label_zh: str, kind: FieldKind, required: bool) -> FieldSpec:
    return FieldSpec(key, label_zh, kind, NORMALIZERS[kind], required, CHARSETS[kind])


# In DESIGN §5 order. Required: what a policy cannot be processed without (missing -> needs_review).
FIELDS: dict[str, FieldSpec] = {
    "policy_number": _spec("policy_number", "保险单号", "code", True),
    "insurer": _spec("insurer", "保险公司", "text", True),
    "product_name": _spec("product_name", "险种名称", "text", True),
    "policyholder_name": _spec("policyholder_name", "投保人", "name", True),
    "policyholder_id_number": _spec("policyholder_id_number", "投保人身份证号", "id_number", True),
    "policyholder_phone": _spec("policyholder_phone", "投保人联系电话", "phone", False),
    "policyholder_address": _spec("policyholder_address", "投保人通讯地址", "text", False),
    "insured_name": _spec("insured_name", "被保险人", "name", True),
    "insured_id_number": _spec("insured_id_number", "被保险人身份证号", "id_number", True),
    "beneficiary_name": _spec("beneficiary_name", "受益人", "beneficiary", False),
    "sum_insured": _spec("sum_insured", "保险金额", "amount", True),
    "premium": _spec("premium", "保险费", "amount", True),
    "effective_date": _spec("effective_date", "生效日期", "date", True),
    "expiry_date": _spec("expiry_date", "满期日期", "date", True),
    "issue_date": _spec("issue_date", "签单日期", "date", False),
}

FIELD_KEYS: tuple[str, ...] = tuple(FIELDS)


def normalize_field(key: str, text: str, today: date) -> Normalized:
    """Normalize ``text`` read for field ``key``; raises ``KeyError`` for an unknown key."""
    return FIELDS[key].normalizer(text, today)
