"""Strategy 1b: attribute headers over rows that each open with a role."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import INS_ID, PH_ID, rows, values


def test_a_table_of_attribute_headers_over_role_rows() -> None:
    lines = rows(
        ("", "", "身份证件号码", "电话号码", "居住地址"),
        ("投保人", "张三", PH_ID, "13812345678", "北京市朝阳区建国路88号"),
        ("被保险人", "李小四", INS_ID, "13900001111", "上海市徐汇区漕溪北路18号"),
        x0=40, col=330,
    )
    got = values(lines)
    assert got["policyholder_name"] == "张三"
    assert got["policyholder_id_number"] == PH_ID
    assert got["policyholder_phone"] == "13812345678"
    assert got["policyholder_address"] == "北京市朝阳区建国路88号"  # not the insured's, in the row below
    assert got["insured_name"] == "李小四"
    assert got["insured_id_number"] == INS_ID


def test_rows_that_open_with_no_role_are_not_read() -> None:
    lines = rows(
        ("", "身份证件号码", "居住地址"),
        ("代理人", "A1234567", "上海市徐汇区漕溪北路18号"),
        x0=40, col=330,
    )
    assert values(lines)["policyholder_address"] is None
