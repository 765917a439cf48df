"""Field labels as printed on policies, and how they are decorated.

``SHARED_LABELS`` may appear in every split (they include every synonym listed in docs/schema.md).
``HELD_OUT_LABELS`` appear only in the ``test`` split (see :mod:`samples.synth.splits`).
``SECTION_LABELS`` are the short labels used inside a titled section (``投保人信息`` → ``姓名``);
they are shared by all splits.
"""
from __future__ import annotations

import random

from samples.synth.rand import chance

SHARED_LABELS: dict[str, tuple[str, ...]] = {
    "policy_number": ("保险单号", "保单号码", "保单号", "保险单号码", "合同号"),
    "insurer": ("保险公司", "承保公司", "承保机构", "保险人"),
    "product_name": ("险种名称", "产品名称", "保险产品", "险种", "主险名称"),
    "policyholder_name": ("投保人", "投保人姓名", "投保人名称"),
    "policyholder_id_number": ("投保人身份证号", "投保人证件号码", "投保人身份证号码", "投保人证件号"),
    "policyholder_phone": ("联系电话", "手机号码", "投保人联系电话", "投保人手机", "移动电话"),
    "policyholder_address": ("通讯地址", "联系地址", "投保人地址", "投保人通讯地址", "住址"),
    "insured_name": ("被保险人", "被保险人姓名", "被保人"),
    "insured_id_number": ("被保险人身份证号", "被保险人证件号码", "被保险人身份证号码", "被保人证件号码"),
    "beneficiary_name": ("受益人", "身故受益人", "身故保险金受益人"),
    "sum_insured": ("保险金额", "基本保险金额", "保额", "基本保额"),
    "premium": ("保险费", "首期保险费", "保费", "年交保险费", "首期保费"),
    "effective_date": ("生效日期", "保险起期", "合同生效日", "起保日期"),
    "expiry_date": ("满期日期", "保险止期", "终止日期", "保险期满日"),
    "issue_date": ("签单日期", "签发日期", "出单日期", "签单时间"),
}

HELD_OUT_LABELS: dict[str, tuple[str, ...]] = {
    "policy_number": ("保险合同号", "保单编号"),
    "insurer": ("承保单位", "保险机构"),
    "product_name": ("投保险种", "保险计划"),
    "policyholder_name": ("要保人", "投保人（姓名）"),
    "policyholder_id_number": ("投保人公民身份号码", "要保人证件号码"),
    "policyholder_phone": ("手机", "联系方式"),
    "policyholder_address": ("邮寄地址", "家庭住址"),
    "insured_name": ("受保人", "被保险人名称"),
    "insured_id_number": ("被保险人公民身份号码", "受保人证件号码"),
    "beneficiary_name": ("指定受益人", "保险金受益人"),
    "sum_insured": ("保障额度", "总保险金额"),
    "premium": ("应交保费", "期交保险费"),
    "effective_date": ("保险责任起始日", "生效时间"),
    "expiry_date": ("保险责任终止日", "到期日期"),
    "issue_date": ("制单日期", "保单签发日"),
}

# Short labels used inside a titled section; the section title says whose data it is.
SECTION_LABELS: dict[str, tuple[str, ...]] = {
    "policyholder_name": ("姓名", "名称"),
    "policyholder_id_number": ("证件号码", "身份证号", "身份证号码"),
    "policyholder_phone": ("联系电话", "手机号码", "电话"),
    "policyholder_address": ("通讯地址", "联系地址", "地址"),
    "insured_name": ("姓名",),
    "insured_id_number": ("证件号码", "身份证号码"),
    "beneficiary_name": ("姓名", "受益人"),
}
SECTION_TITLES: dict[str, tuple[str, ...]] = {
    "policy": ("保单信息", "基本信息", "合同信息", "保险合同信息"),
    "policyholder": ("投保人信息", "投保人资料", "投保人"),
    "insured": ("被保险人信息", "被保险人资料", "被保险人"),
    "beneficiary": ("受益人信息", "身故受益人信息"),
    "coverage": ("保障信息", "承保信息", "保险责任", "险种信息"),
    "other": ("其他信息", "服务信息", "缴费信息"),
}
PERIOD_LABELS: tuple[str, ...] = ("保险期间", "保险期限", "保障期间")
PERIOD_HELD_OUT: tuple[str, ...] = ("保险责任期间",)

COLONS: dict[str, float] = {"：": 0.6, ":": 0.15, "": 0.25}


def field_label(field: str, rng: random.Random, held_out_p: float) -> str:
    """A label for ``field``; a held-out synonym with probability ``held_out_p`` (0 outside ``test``)."""
    if held_out_p > 0 and chance(rng, held_out_p):
        return rng.choice(HELD_OUT_LABELS[field])
    return rng.choice(SHARED_LABELS[field])


def all_shared_labels() -> set[str]:
    out = {lab for labs in SHARED_LABELS.values() for lab in labs}
    out |= {lab for labs in SECTION_LABELS.values() for lab in labs}
    return out | set(PERIOD_LABELS)


def all_held_out_labels() -> set[str]:
    return {lab for labs in HELD_OUT_LABELS.values() for lab in labs} | set(PERIOD_HELD_OUT)


def spaced(label: str, gap: str = " ") -> str:
    """``投保人`` -> ``投 保 人`` (letter-spaced labels on forms)."""
    return gap.join(label)
