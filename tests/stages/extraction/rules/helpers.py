"""Hand-made OCR lines for the rules extractor's tests: boxes, rows of cells, rotated pages, wrapped paragraphs."""
from __future__ import annotations

from datetime import date
from typing import Optional

import numpy as np

from stages.extraction.rules import OcrLine, extract_rules
from stages.postprocess.values import id_check_char

TODAY = date(2026, 6, 1)
CHAR_W = 24
LINE_H = 30


def make_id(birth: str, region: str = "110105", seq: str = "451") -> str:
    first17 = region + birth + seq
    return first17 + id_check_char(first17)


PH_ID = make_id("19900307")
INS_ID = make_id("20150101", "310104", "123")


def box(text: str, x: float, y: float, page: int = 0, char_w: float = CHAR_W) -> OcrLine:
    w = max(len(text), 1) * char_w
    return OcrLine(text, ((x, y), (x + w, y), (x + w, y + LINE_H), (x, y + LINE_H)), page)


def rows(*items: tuple[str, ...], x0: float = 60, col: float = 500, pitch: float = 45, y0: float = 100,
         page: int = 0) -> list[OcrLine]:
    """Each item is one row; each string in it is a box in the next column."""
    out = []
    for r, cells in enumerate(items):
        for c, text in enumerate(cells):
            if text:
                out.append(box(text, x0 + c * col, y0 + r * pitch, page))
    return out


def values(lines: list, today: date = TODAY) -> dict[str, Optional[str]]:
    return {k: (m.value if m else None) for k, m in extract_rules(lines, today).items()}


EXPECTED = {
    "policy_number": "P2026000123456",
    "insurer": "瑞丰人寿保险股份有限公司",
    "product_name": "金福终身寿险(2024版)",
    "policyholder_name": "张三",
    "policyholder_id_number": PH_ID,
    "policyholder_phone": "13812345678",
    "policyholder_address": "北京市朝阳区建国路88号阳光花园3栋",
    "insured_name": "李小四",
    "insured_id_number": INS_ID,
    "beneficiary_name": "法定",
    "sum_insured": "500000.00",
    "premium": "5230.50",
    "effective_date": "2026-01-01",
    "expiry_date": "2027-01-01",
    "issue_date": "2025-12-20",
}


def assert_fields(got: dict[str, Optional[str]], expected: dict[str, Optional[str]]) -> None:
    wrong = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
    assert not wrong, wrong


def key_value_lines() -> list[OcrLine]:
    return rows(
        ("瑞丰人寿保险股份有限公司",),
        ("个人保险单",),
        ("保险单号：P2026000123456",),
        ("险种名称：金福终身寿险（2024版）",),
        ("投保人：张三",),
        ("投保人身份证号：" + PH_ID,),
        ("联系电话：138-1234-5678",),
        ("通讯地址：北京市朝阳区建国路88号阳光花园3栋",),
        ("被保险人：李小四",),
        ("被保险人身份证号码：" + INS_ID,),
        ("身故受益人：法定继承人",),
        ("保险金额：人民币伍拾万元整（¥500,000.00）",),
        ("保险费：¥5,230.50",),
        ("保险期间：自2026年1月1日零时起至2027年1月1日二十四时止",),
        ("签单日期：2025年12月20日",),
    )


def rotate(lines: list[OcrLine], degrees: float) -> list[OcrLine]:
    a = np.radians(degrees)
    c, s = np.cos(a), np.sin(a)
    return [OcrLine(ln.text, tuple((x * c - y * s, x * s + y * c) for x, y in ln.polygon), ln.page) for ln in lines]


def paragraph(text: str, width: int = 36, x0: float = 60, y0: float = 300) -> list[OcrLine]:
    """A left-aligned paragraph wrapped every ``width`` characters."""
    return [box(text[i:i + width], x0, y0 + k * 40) for k, i in enumerate(range(0, len(text), width))]
