"""The rules extractor end to end: the result's shape, conflicts between strategies, single labels, the corpus."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from stages.contracts.types import TextLine
from stages.extraction.field_specs import FIELD_KEYS
from stages.extraction.rules import RuleMatch, extract_rules, lines_from_records
from tests.stages.extraction.rules.helpers import (
    EXPECTED,
    INS_ID,
    PH_ID,
    TODAY,
    assert_fields,
    key_value_lines,
    paragraph,
    rows,
    values,
)


def test_key_value_lines() -> None:
    assert_fields(values(key_value_lines()), EXPECTED)


def test_result_has_every_key_in_order_and_match_details() -> None:
    result = extract_rules(key_value_lines(), TODAY)
    assert tuple(result) == FIELD_KEYS
    m = result["sum_insured"]
    assert isinstance(m, RuleMatch)
    assert m.text == "人民币伍拾万元整（¥500,000.00）"
    assert m.line_indices == (11,)
    assert m.method == "label"
    assert 0 < m.score <= 1
    assert m.normalized.valid
    assert result["beneficiary_name"] is not None and result["beneficiary_name"].text == "法定继承人"


def test_invalid_values_are_reported_not_dropped() -> None:
    bad_id = PH_ID[:-1] + ("0" if PH_ID[-1] != "0" else "1")
    lines = rows(("投保人身份证号：" + bad_id,), ("保险金额：人民币伍拾万元整（¥400,000.00）",), ("生效日期：2026年2月30日",))
    result = extract_rules(lines, TODAY)
    ph = result["policyholder_id_number"]
    assert ph is not None and ph.value == bad_id and ph.normalized.issues == ("id_checksum",)
    s = result["sum_insured"]
    assert s is not None and s.value == "500000.00" and s.normalized.issues == ("amount_mismatch",)  # capitals win
    assert result["effective_date"] is None  # no parseable date: nothing to report


def test_multi_page_and_textline_input() -> None:
    def tl(text: str, x: float, y: float) -> TextLine:
        poly = np.array([[x, y], [x + 300, y], [x + 300, y + 30], [x, y + 30]], dtype=np.float32)
        return TextLine(text=text, score=0.99, polygon=poly)

    got = values([tl("投保人：张三", 50, 100), tl("保险费：¥5,230.50", 50, 150)])
    assert got["policyholder_name"] == "张三" and got["premium"] == "5230.50"

    page0 = rows(("投保人",), y0=1500, page=0)
    page1 = rows(("张三",), y0=100, page=1)
    assert values(page0 + page1)["policyholder_name"] is None  # never below across a page break


def test_empty_input() -> None:
    assert values([]) == {k: None for k in FIELD_KEYS}


@dataclass(frozen=True)
class _Duck:
    text: str
    polygon: list[list[float]]


@pytest.mark.parametrize("text, key, expected", [
    ("受益人：法定", "beneficiary_name", "法定"),
    ("身故保险金受益人：王五", "beneficiary_name", "王五"),
    ("被保人：李小四", "insured_name", "李小四"),
    ("合同号：2026-000123-456789", "policy_number", "2026-000123-456789"),
    ("保单号码：1234 5678 9012 3456", "policy_number", "1234567890123456"),
    ("保险期满日：2027-01-01", "expiry_date", "2027-01-01"),
    ("起保日期：2026年1月1日0时起", "effective_date", "2026-01-01"),
    ("保险止期：2027年1月1日二十四时止", "expiry_date", "2027-01-01"),
    ("年交保险费：¥5,230.50", "premium", "5230.50"),
    ("基本保额：50万元", "sum_insured", "500000.00"),
    ("投保人名称：张三", "policyholder_name", "张三"),
    ("投保人手机：13812345678", "policyholder_phone", "13812345678"),
    ("移动电话：13812345678", "policyholder_phone", "13812345678"),
    ("住址：北京市朝阳区建国路88号", "policyholder_address", "北京市朝阳区建国路88号"),
    ("投保人地址：北京市朝阳区建国路88号", "policyholder_address", "北京市朝阳区建国路88号"),
    ("主险名称：鑫享终身寿险A款", "product_name", "鑫享终身寿险A款"),
    ("承保机构：瑞丰人寿保险股份有限公司北京分公司", "insurer", "瑞丰人寿保险股份有限公司北京分公司"),
    ("被保险人身份证号：" + INS_ID, "insured_id_number", INS_ID),
    ("被保人证件号码：" + INS_ID, "insured_id_number", INS_ID),
    ("投保人证件号：" + PH_ID.lower(), "policyholder_id_number", PH_ID),
    ("签单时间：2025-12-20 10:32:05", "issue_date", "2025-12-20"),
    ("合同生效日：2026/01/01", "effective_date", "2026-01-01"),
])
def test_single_labels(text: str, key: str, expected: str) -> None:
    got = values([_Duck(text, [[10, 10], [600, 10], [600, 40], [10, 40]])])
    assert got[key] == expected


SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "pages"


def test_samples_pages_ground_truth_lines() -> None:
    """The rules on the corpus' ground-truth lines (train/dev pages only: test pages use held-out labels)."""
    pages = sorted(p for p in SAMPLES.glob("*.json") if not p.name.startswith("test_")) if SAMPLES.is_dir() else []
    if not pages:
        pytest.skip("no samples/pages/*.json")
    tp = fp = fn = 0
    for path in pages:
        doc = json.loads(path.read_text(encoding="utf-8"))
        result = extract_rules(lines_from_records(doc["lines"]), date(2100, 1, 1))
        for key in FIELD_KEYS:
            got, truth = (result[key].value if result[key] else None), doc["fields"].get(key)
            if got == truth:
                tp += truth is not None
            else:
                fp += got is not None
                fn += truth is not None
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    assert precision >= 0.97 and recall >= 0.9, (precision, recall)


def test_narrative_id_overrules_the_role_guessed_from_context() -> None:
    lines = paragraph("投保人张三（身份证号码：" + PH_ID + "），以李小四（身份证号码：" + INS_ID + "）为被保险人。")
    got = values(lines)
    assert got["insured_id_number"] == INS_ID
    assert got["policyholder_id_number"] == PH_ID


def test_same_as_policyholder() -> None:
    lines = rows(("投保人：张三", "证件号码：" + PH_ID), ("被保险人：同投保人",), x0=40, col=400)
    got = values(lines)
    assert got["insured_name"] == "张三"
