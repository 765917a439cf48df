"""Few-shot layout families: one fixed layout each, with label wordings that neither the rules' lexicon nor the
generator's other label lists (shared or held out) contain. Generated only when asked for (``docpipe synth
--layouts NAME``), never in a default train/dev/test draw, so that adapting to an insurer's new forms from a few
corrected documents can be measured (``scripts/few_shot_curve.py``, docs/adaptation.md)."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class FewShotFamily:
    """``renderer``: the layout module that draws it; ``labels``: the one label each field is printed with (the
    new wordings are the entries of ``new``); ``colon``: after every label."""

    name: str
    renderer: str
    labels: Mapping[str, str]
    new: tuple[str, ...]
    colon: str


def _family(name: str, renderer: str, labels: dict[str, str], new: tuple[str, ...] | None, colon: str
            ) -> FewShotFamily:
    """``new=None``: every label is a new wording."""
    return FewShotFamily(name, renderer, MappingProxyType(labels), tuple(labels.values()) if new is None else new, colon)


FEW_SHOT_FAMILIES: Mapping[str, FewShotFamily] = MappingProxyType({
    # aligned key/value lines; the insured's role word, the mailing address and the issue date in new wordings
    "fs_ledger": _family("fs_ledger", "fs_ledger", {
        "policy_number": "保单号码", "insurer": "保险公司", "product_name": "产品名称", "policyholder_name": "投保人",
        "policyholder_id_number": "投保人证件号码", "policyholder_phone": "联系电话",
        "policyholder_address": "寄送地址", "insured_name": "承保对象", "insured_id_number": "被保险人证件号码",
        "beneficiary_name": "身故受益人", "sum_insured": "基本保额", "premium": "保险费",
        "effective_date": "生效日期", "expiry_date": "满期日期", "issue_date": "开立日期",
    }, ("寄送地址", "承保对象", "开立日期"), "："),
    # a ruled label | value table; the policyholder's role word, the sum insured and the start date in new wordings
    "fs_grid": _family("fs_grid", "ruled_table", {
        "policy_number": "保险单号", "insurer": "承保公司", "product_name": "险种名称", "policyholder_name": "订约人",
        "policyholder_id_number": "投保人证件号码", "policyholder_phone": "手机号码",
        "policyholder_address": "通讯地址", "insured_name": "被保险人", "insured_id_number": "被保险人证件号码",
        "beneficiary_name": "受益人", "sum_insured": "赔付上限", "premium": "保费",
        "effective_date": "保障启动日", "expiry_date": "满期日期", "issue_date": "签单日期",
    }, ("订约人", "赔付上限", "保障启动日"), ""),
    # label-above-value boxes; the policyholder's role word (and so its ID and phone labels), the mailing address,
    # the sum insured, the expiry and the issue date in new wordings
    "fs_boxes": _family("fs_boxes", "label_above", {
        "policy_number": "保单号", "insurer": "保险公司", "product_name": "保险产品", "policyholder_name": "申请人",
        "policyholder_id_number": "申请人证件号码", "policyholder_phone": "申请人电话",
        "policyholder_address": "收件地址", "insured_name": "被保险人", "insured_id_number": "被保险人身份证号",
        "beneficiary_name": "身故受益人", "sum_insured": "责任限额", "premium": "保险费",
        "effective_date": "生效日期", "expiry_date": "保障终止日", "issue_date": "填发日期",
    }, ("申请人", "申请人证件号码", "申请人电话", "收件地址", "责任限额", "保障终止日", "填发日期"), ""),
    # column-header bands (the layout of the test split's held-out column tables); the policy number, the insured's
    # role word (and so its ID label), the premium and the start date in new wordings
    "fs_columns": _family("fs_columns", "column_table", {
        "policy_number": "契约号码", "insurer": "保险公司", "product_name": "产品名称", "policyholder_name": "投保人",
        "policyholder_id_number": "投保人证件号码", "policyholder_phone": "联系电话",
        "policyholder_address": "联系地址", "insured_name": "保障对象", "insured_id_number": "保障对象证件号",
        "beneficiary_name": "受益人", "sum_insured": "保险金额", "premium": "应缴金额",
        "effective_date": "保障起始日", "expiry_date": "终止日期", "issue_date": "签发日期",
    }, ("契约号码", "保障对象", "保障对象证件号", "应缴金额", "保障起始日"), ""),
    # two label: value pairs a row; every person's role word, the address, both amounts and all three dates in
    # new wordings, and an insurer and product label the lexicon lacks
    "fs_pairs": _family("fs_pairs", "two_column", {
        "policy_number": "单据编号", "insurer": "签发公司", "product_name": "保障项目", "policyholder_name": "契约人",
        "policyholder_id_number": "契约人证件号码", "policyholder_phone": "契约人电话",
        "policyholder_address": "联络处所", "insured_name": "保险对象", "insured_id_number": "保险对象证件号",
        "beneficiary_name": "领款人", "sum_insured": "赔偿限额", "premium": "缴费额",
        "effective_date": "保障开始日", "expiry_date": "止保日", "issue_date": "开单日",
    }, None, "："),
    # column-header bands with every label in a new wording (a form of fs_pairs' kind in fs_columns' layout)
    "fs_bands": _family("fs_bands", "column_table", {
        "policy_number": "保险凭证号", "insurer": "承办公司", "product_name": "保险品种", "policyholder_name": "立约人",
        "policyholder_id_number": "立约人身份证号", "policyholder_phone": "立约人手机",
        "policyholder_address": "通信处", "insured_name": "保障人", "insured_id_number": "保障人证件号",
        "beneficiary_name": "受领人", "sum_insured": "给付额度", "premium": "期缴金额",
        "effective_date": "起算日", "expiry_date": "届满日", "issue_date": "开具日",
    }, None, ""),
})
