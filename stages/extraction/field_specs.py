"""The field registry (docs/schema.md): every output key, its Chinese label, kind, normalizer and OCR charset."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Callable, Optional

from stages.contracts.fields import FIELD_INFO, FIELD_KEYS, FieldKind  # noqa: F401  (FIELD_KEYS re-exported)
from stages.postprocess import values as nz
from stages.postprocess.values import Normalized

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

# fields whose values need more than their kind's normalizer
KEY_NORMALIZERS: dict[str, Normalizer] = {
    "insurer": _without_today(nz.normalize_company),
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


# In schema order (docs/schema.md), from the contract's field table.
FIELDS: dict[str, FieldSpec] = {
    f.key: FieldSpec(f.key, f.label_zh, f.kind, KEY_NORMALIZERS.get(f.key, NORMALIZERS[f.kind]), f.required,
                     CHARSETS[f.kind])
    for f in FIELD_INFO
}


# every field alphabet: their CTC probabilities are kept with each line for constrained re-decoding
FIELD_CHARSET: str = "".join(s.charset for s in FIELDS.values() if s.charset)


def normalize_field(key: str, text: str, today: date) -> Normalized:
    """Normalize ``text`` read for field ``key``; raises ``KeyError`` for an unknown key."""
    return FIELDS[key].normalizer(text, today)
