"""Bare labels take the role in force; distractor roles (agents, hotlines) are never used."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import EXPECTED, INS_ID, PH_ID, rows, values


def test_distractors_are_ignored() -> None:
    lines = rows(
        ("瑞丰人寿保险股份有限公司",),
        ("全国统一客服电话：95519    服务热线：400-820-8888",),
        ("公司地址：上海市浦东新区世纪大道100号环球中心",),
        ("投保人：张三",),
        ("联系电话：13812345678",),
        ("被保险人：李小四",),
        ("代理人：王五    代理人编码：A12345678    电话：13900001111",),
        ("业务员姓名：赵六  工号：1234567890  手机：13700002222",),
        ("营销员：孙七 联系电话：13600003333",),
        ("本公司地址：北京市西城区金融大街1号",),
    )
    got = values(lines)
    assert got["policyholder_name"] == "张三"
    assert got["insured_name"] == "李小四"
    assert got["policyholder_phone"] == "13812345678"
    assert got["policyholder_address"] is None
    assert got["insurer"] == "瑞丰人寿保险股份有限公司"


def test_hotline_is_never_the_policyholder_phone() -> None:
    lines = rows(("投保人：张三",), ("客服电话：95519",), ("服务热线 400-820-8888",), ("咨询电话：13800000000",))
    assert values(lines)["policyholder_phone"] is None


def test_agent_phone_after_policyholder_section() -> None:
    lines = rows(("投保人：张三",), ("联系电话：13812345678",), ("代理人：王五",), ("联系电话：13900001111",))
    assert values(lines)["policyholder_phone"] == "13812345678"


def test_section_titles_give_bare_labels_their_role() -> None:
    lines = rows(
        ("投保人信息",),
        ("姓名：张三", "证件号码：" + PH_ID),
        ("联系电话：138-1234-5678", "地址：北京市朝阳区建国路88号阳光花园3栋"),
        ("被保险人信息",),
        ("姓名：李小四", "身份证号码：" + INS_ID),
        ("受益人信息",),
        ("姓名：法定继承人",),
        x0=40, col=600,
    )
    got = values(lines)
    for key in ("policyholder_name", "policyholder_id_number", "policyholder_phone", "policyholder_address",
                "insured_name", "insured_id_number", "beneficiary_name"):
        assert got[key] == EXPECTED[key], key


def test_insured_section_phone_is_not_the_policyholders() -> None:
    lines = rows(("被保险人信息",), ("姓名：李小四",), ("被保险人联系电话：13900001111",), ("投保人：张三",))
    got = values(lines)
    assert got["policyholder_phone"] is None
    assert got["insured_name"] == "李小四"
