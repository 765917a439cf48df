"""Strategy 3: field-shaped text without a label."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import INS_ID, PH_ID, rows, values


def test_field_shaped_fallbacks() -> None:
    lines = rows(
        ("投保人 张三 " + PH_ID,),
        ("被保险人 李小四 " + INS_ID + " 13812345678",),
        ("自2026年1月1日零时起至2027年1月1日二十四时止",),
    )
    got = values(lines)
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_id_number"] == INS_ID
    assert got["effective_date"] == "2026-01-01"
    assert got["expiry_date"] == "2027-01-01"


def test_unlabelled_ids_in_order() -> None:
    lines = rows(("张三", PH_ID), ("李小四", INS_ID))
    got = values(lines)
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_id_number"] == INS_ID


def test_unlabelled_number_must_be_a_validmake_id() -> None:
    lines = rows(("保单号码——216946169157398502",), ("投保人：张三", "证件号码：" + PH_ID))
    got = values(lines)
    assert got["policy_number"] == "216946169157398502"
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_id_number"] is None


def _positioned(text: str, blank_after: int | None) -> "object":
    """A line whose characters sit at a 24 px pitch, with a blank of one character after ``blank_after``."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class _Line:
        text: str
        polygon: tuple
        page: int
        char_u: tuple
        vertical: bool = False

    centres, x = [], 12.0
    for i in range(len(text)):
        centres.append(x)
        x += 24 + (24 if blank_after is not None and i == blank_after else 0)
    width = x
    poly = ((60, 100), (60 + width, 100), (60 + width, 130), (60, 130))
    return _Line(text, poly, 0, tuple(c / width for c in centres))


def test_wide_blanks_are_found_from_character_positions() -> None:
    from stages.extraction.rules.lines import wide_blanks

    assert wide_blanks(_positioned("保险计划远航", 3)) == frozenset({4})
    assert wide_blanks(_positioned("保险计划远航", None)) == frozenset()
    assert wide_blanks(rows(("保险计划远航",))[0]) == frozenset()  # a line without positions


def test_a_company_title_that_lost_its_last_character_is_the_insurer() -> None:
    lines = rows(("锦程财产保险股份有限公",), ("个人保险合同保险单",), ("投保人：张三",))
    assert values(lines)["insurer"] == "锦程财产保险股份有限公司"
