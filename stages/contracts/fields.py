"""The output fields (docs/schema.md) as a contract: every key in schema order, its Chinese label, its kind and
whether a policy must have it. Normalizers and OCR charsets live with the extraction stage."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

FieldKind = Literal["code", "text", "name", "beneficiary", "id_number", "phone", "amount", "date"]


@dataclass(frozen=True)
class FieldInfo:
    key: str
    label_zh: str
    kind: FieldKind
    required: bool  # every policy prints it and a claim cannot proceed without it: missing -> needs_review


# In schema order (docs/schema.md). Not required: what policies may leave out (a whole-life policy prints no expiry
# date, an insured who is the policyholder often no second ID number, a certificate no premium or product name);
# their absence routes through its calibrated P(really absent) like any field's (docs/decisions.md).
FIELD_INFO: tuple[FieldInfo, ...] = (
    FieldInfo("policy_number", "保险单号", "code", True),
    FieldInfo("insurer", "保险公司", "text", True),
    FieldInfo("product_name", "险种名称", "text", False),
    FieldInfo("policyholder_name", "投保人", "name", True),
    FieldInfo("policyholder_id_number", "投保人身份证号", "id_number", True),
    FieldInfo("policyholder_phone", "投保人联系电话", "phone", False),
    FieldInfo("policyholder_address", "投保人通讯地址", "text", False),
    FieldInfo("insured_name", "被保险人", "name", True),
    FieldInfo("insured_id_number", "被保险人身份证号", "id_number", False),
    FieldInfo("beneficiary_name", "受益人", "beneficiary", False),
    FieldInfo("sum_insured", "保险金额", "amount", True),
    FieldInfo("premium", "保险费", "amount", False),
    FieldInfo("effective_date", "生效日期", "date", True),
    FieldInfo("expiry_date", "满期日期", "date", False),
    FieldInfo("issue_date", "签单日期", "date", False),
)

FIELD_KEYS: tuple[str, ...] = tuple(f.key for f in FIELD_INFO)

PERSONS: tuple[str, ...] = ("policyholder", "insured", "beneficiary")  # the people a policy names, key prefixes


def field_role(key: str) -> Optional[str]:
    """The person a field belongs to (``insured_id_number`` -> ``insured``), or None for a field of the policy."""
    return next((p for p in PERSONS if key.startswith(p + "_")), None)
