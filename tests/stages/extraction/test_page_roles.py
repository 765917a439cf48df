"""Page roles and role-aware extraction: a letter's or the terms' distractor values never beat the schedule's."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from stages.contracts.types import Page, TextLine
from stages.extraction.page_roles import RoleAwareFields, page_role
from stages.extraction.stage import DocumentFields


def _lines(texts: list[str]) -> list[TextLine]:
    return [TextLine(t, 0.99, np.array([[20, 40 * i], [600, 40 * i], [600, 40 * i + 30], [20, 40 * i + 30]], np.float32))
            for i, t in enumerate(texts)]


LETTER = ["平安喜乐人寿保险股份有限公司", "致客户的一封信", "尊敬的王先生：", "您的保单已于2024年3月5日寄出，",
          "续期保险费：¥3,200.00", "服务人员：刘洋", "此致", "敬礼"]
TERMS = ["附加意外伤害保险条款", "第一条 合同构成", "本合同由保险条款、保险单构成。", "第二条 保险金额",
         "保险金额：50万元", "第三条 保险期间", "生效日期：2020年1月1日"]
SCHEDULE = ["个人保险单", "保险单号：P2026000123456", "投保人：张三", "投保人身份证号：11010519900307451X",
            "被保险人：李四", "保险金额：¥500,000.00", "保险费：¥6,000.00", "生效日期：2026年1月1日", "签单日期：2025年12月20日"]


def test_roles_of_letter_terms_and_schedule() -> None:
    assert page_role(_lines(LETTER)) == "letter"
    assert page_role(_lines(TERMS)) == "terms"
    assert page_role(_lines(SCHEDULE)) == "schedule"
    assert page_role(_lines(["附件", "影像资料"])) == "other"
    narrative = ["人身保险单", "兹有投保人王芳（身份证号码：110105199003074512，联系电话13800138000）以本人为被保险人，",
                 "向本公司投保福寿安康终身寿险，保险金额为人民币伍拾万元整，年交保险费人民币陆仟元整，",
                 "保险期间自2026年1月1日零时起至终身，受益人为法定。", "签单日期：2025年12月20日"]
    assert page_role(_lines(narrative)) == "schedule"


class _Recorder:
    def __init__(self) -> None:
        self.offered: list = []

    def __call__(self, lines, pages):
        self.offered = [[ln.text for ln in page] for page in lines]
        return DocumentFields({}, [], {})


def test_letter_and_terms_are_hidden_only_beside_a_schedule() -> None:
    inner = _Recorder()
    stage = RoleAwareFields(inner)
    pages = [Page(i, np.zeros((8, 8, 3), np.uint8)) for i in range(3)]
    found = stage([_lines(LETTER), _lines(SCHEDULE), _lines(TERMS)], pages)
    assert inner.offered == [[], SCHEDULE, []] and found.diagnostics["page_roles"] == ["letter", "schedule", "terms"]
    stage([_lines(LETTER)], pages[:1])  # a single page is read as it is, whatever it looks like
    assert inner.offered == [LETTER]
    stage([_lines(LETTER), _lines(TERMS)], pages[:2])  # no schedule: nothing is hidden
    assert inner.offered == [LETTER, TERMS]


@pytest.mark.slow
def test_distractor_pages_lose_to_the_schedule(inline_engine) -> None:
    from samples.synth.document import generate_document
    from samples.synth.multipage import draw_page, to_pdf

    image, truth = generate_document(5, "dev", 2)
    h, w = image.shape[:2]
    rng = random.Random(0)
    # the letter and the terms come first and carry every distractor under the schedule's own labels
    letter = draw_page(["保单送达函", "尊敬的客户：", "投保人：欧阳明", "保险金额：¥999,999.00", "保险费：¥8,888.00",
                        "生效日期：2019年1月1日", "签单日期：2018年12月1日", "此致", "敬礼"], w, h, truth["font"], rng)
    terms = draw_page(["保险条款", "第一条 合同构成", "第二条 示例", "被保险人：赵小红", "保险金额：¥123,456.00",
                       "保险费：¥1,000.00", "满期日期：2039年1月1日", "第三条 保险期间"], w, h, truth["font"], rng)
    pdf = to_pdf([letter, terms, image], 90)
    res = inline_engine.extract(pdf)
    assert not res["errors"] and len(res["pages"]) == 3
    found = {k: v for k, v in res["fields"].items() if v is not None}
    assert len(found) >= 12
    assert {v["page"] for v in found.values()} == {2}, json.dumps({k: v["page"] for k, v in found.items()})
    for key in ("sum_insured", "premium", "effective_date", "issue_date", "policyholder_name"):
        assert found[key]["value"] == truth["fields"][key], key
