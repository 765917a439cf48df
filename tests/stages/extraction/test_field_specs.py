"""The field registry in stages.extraction.field_specs."""
from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from stages.extraction.field_specs import (
    AMOUNT_CHARSET,
    DATE_CHARSET,
    FIELD_KEYS,
    FIELDS,
    ID_CHARSET,
    PHONE_CHARSET,
    FieldSpec,
    normalize_field,
)
from stages.postprocess.values import Normalized, id_check_char

TODAY = date(2026, 6, 1)

SCHEMA_ORDER = (
    "policy_number", "insurer", "product_name", "policyholder_name", "policyholder_id_number", "policyholder_phone",
    "policyholder_address", "insured_name", "insured_id_number", "beneficiary_name", "sum_insured", "premium",
    "effective_date", "expiry_date", "issue_date",
)


def test_all_fifteen_keys_in_design_order() -> None:
    assert tuple(FIELDS) == SCHEMA_ORDER
    assert FIELD_KEYS == SCHEMA_ORDER
    assert all(spec.key == key for key, spec in FIELDS.items())


def test_specs_are_frozen() -> None:
    spec = FIELDS["premium"]
    assert isinstance(spec, FieldSpec)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.required = False  # type: ignore[misc]


def test_kinds_and_labels() -> None:
    kinds = {key: spec.kind for key, spec in FIELDS.items()}
    assert kinds["policyholder_id_number"] == kinds["insured_id_number"] == "id_number"
    assert kinds["sum_insured"] == kinds["premium"] == "amount"
    assert kinds["effective_date"] == kinds["expiry_date"] == kinds["issue_date"] == "date"
    assert kinds["policyholder_phone"] == "phone"
    assert kinds["beneficiary_name"] == "beneficiary"
    assert FIELDS["policyholder_name"].label_zh == "投保人"
    assert FIELDS["sum_insured"].label_zh == "保险金额"
    assert all(spec.label_zh for spec in FIELDS.values())


def test_charsets() -> None:
    assert FIELDS["policyholder_id_number"].charset == ID_CHARSET == "0123456789X"
    assert set("0123456789-") <= set(PHONE_CHARSET)
    assert set("0123456789年月日/-.〇零一二三四五六七八九十元时起止") == set(DATE_CHARSET)
    assert set("0123456789,.¥￥万元整人民币零壹贰叁肆伍陆柒捌玖拾佰仟亿角分圆（）()") == set(AMOUNT_CHARSET)
    for charset in (ID_CHARSET, PHONE_CHARSET, DATE_CHARSET, AMOUNT_CHARSET):
        assert len(set(charset)) == len(charset)
    for key in ("policy_number", "insurer", "product_name", "policyholder_name", "policyholder_address",
                "insured_name", "beneficiary_name"):
        assert FIELDS[key].charset is None


def test_charsets_cover_their_examples() -> None:
    examples = {
        "effective_date": ["2026年1月1日零时起", "2026-01-01", "2026/1/1", "二〇二六年元月十五日", "2027年1月1日二十四时止"],
        "sum_insured": ["人民币伍拾万元整（¥500,000.00）", "￥500,000.00", "50万元", "叁仟贰佰伍拾陆元伍角", "壹佰圆零伍分"],
        "policyholder_id_number": ["11010519900307451X"],
        "policyholder_phone": ["138-1234-5678", "+86 13812345678", "(86)13812345678"],
    }
    for key, texts in examples.items():
        charset = set(FIELDS[key].charset or "")
        for text in texts:
            assert set(text) <= charset, (key, text, set(text) - charset)


def test_required_fields() -> None:
    required = {key for key, spec in FIELDS.items() if spec.required}
    assert required == {"policy_number", "insurer", "policyholder_name", "policyholder_id_number", "insured_name",
                        "sum_insured", "effective_date"}
    # what a policy may leave out routes through its P(really absent), not as a hard reason
    assert not required & {"policyholder_phone", "product_name", "insured_id_number", "premium", "expiry_date"}


@pytest.mark.parametrize("key, text, expected", [
    ("policy_number", " p2026 0001 ", Normalized("P20260001")),
    ("insurer", "中国平安 人寿保险股份有限公司", Normalized("中国平安人寿保险股份有限公司")),
    ("product_name", "平安福终身寿险（分红型）", Normalized("平安福终身寿险(分红型)")),
    ("policyholder_name", "张 三", Normalized("张三")),
    ("policyholder_id_number", "110105199003074 51x", Normalized("11010519900307451X")),
    ("insured_id_number", "110105199003074510", Normalized("110105199003074510", ("id_checksum",))),
    ("policyholder_phone", "138-1234-5678", Normalized("13812345678")),
    ("policyholder_phone", "95511", Normalized("95511", ("phone_format",))),
    ("policyholder_address", "北京市 朝阳区", Normalized("北京市朝阳区")),
    ("insured_name", "李四", Normalized("李四")),
    ("beneficiary_name", "法定继承人", Normalized("法定")),
    ("sum_insured", "人民币伍拾万元整（¥500,000.00）", Normalized("500000.00")),
    ("premium", "50万元", Normalized("500000.00")),
    ("effective_date", "2026年1月1日零时起", Normalized("2026-01-01")),
    ("expiry_date", "2027年1月1日二十四时止", Normalized("2027-01-01")),
    ("issue_date", "2026年2月30日", Normalized(None, ("unparseable_date",))),
])
def test_normalize_field(key: str, text: str, expected: Normalized) -> None:
    assert normalize_field(key, text, TODAY) == expected


def test_normalize_field_uses_today_for_ids() -> None:
    first17 = "11010520260602451"
    id_number = first17 + id_check_char(first17)
    assert normalize_field("insured_id_number", id_number, TODAY).issues == ("id_birthdate",)
    assert normalize_field("insured_id_number", id_number, date(2026, 6, 2)).valid


def test_unknown_key() -> None:
    with pytest.raises(KeyError):
        normalize_field("agent_name", "王五", TODAY)
