"""Narrative certificate: the fields are embedded in running sentences
(``兹有投保人张三（身份证号码：…）以李四为被保险人，向本公司投保…``)."""
from __future__ import annotations

import random

from samples.synth.canvas import Canvas, Seg
from samples.synth.labels import HELD_OUT_LABELS
from samples.synth.layouts.common import (
    draw_footer, draw_header, draw_notices, draw_paragraph, draw_seal, make_styles, pair_segs,
)
from samples.synth.plan import DocPlan
from samples.synth.rand import chance

_ID_WORDS = ("身份证号码", "证件号码", "身份证号")
_SUM_WORDS = ("基本保险金额", "保险金额", "保额")
_PREMIUM_WORDS = ("保险费", "首期保险费", "年交保险费")


def _words(base: tuple[str, ...], field: str, plan: DocPlan, rng: random.Random) -> str:
    """Inline label word; in the test split sometimes a held-out synonym."""
    if plan.split == "test" and chance(rng, 0.35):
        return rng.choice(HELD_OUT_LABELS[field])
    return rng.choice(base)


_LEAD_INS = ("兹有", "兹据", "向本公司", "本保险单", "本合同", "指定", "（", "以")


def _k(text: str, key: str) -> list[Seg]:
    """Label words of ``key`` inside a sentence: a leading connective (``兹有``, ``（``...) stays untagged."""
    for lead in _LEAD_INS:
        if text.startswith(lead) and len(text) > len(lead):
            return [Seg(lead), Seg(text[len(lead):], key=key)]
    return [Seg(text, key=key)]


def _v(plan: DocPlan, key: str) -> Seg:
    text = plan.field_text[key]
    assert text is not None
    return Seg(text, field=key, atomic=(" " in text or len(text) <= 20))


def paragraph(plan: DocPlan, rng: random.Random, keys: set[str]) -> list[Seg]:
    """The policy sentence(s) covering the fields in ``keys``."""
    has = keys.__contains__
    sentences: list[list[list[Seg]]] = []
    first: list[list[Seg]] = []
    phone_done = False
    if has("policyholder_name"):
        clause = [*_k(rng.choice(("兹有投保人", "投保人", "兹据投保人")), "policyholder_name"), _v(plan, "policyholder_name")]
        inner: list[Seg] = []
        if has("policyholder_id_number"):
            inner += [*_k(_words(_ID_WORDS, "policyholder_id_number", plan, rng) + "：", "policyholder_id_number"), _v(plan, "policyholder_id_number")]
        if has("policyholder_phone") and chance(rng, 0.5):
            inner += ([Seg("，")] if inner else []) + [*_k("联系电话：", "policyholder_phone"), _v(plan, "policyholder_phone")]
            phone_done = True
        if inner:
            clause += [Seg("（"), *inner, Seg("）")]
        first.append(clause)
    if has("insured_name"):
        clause = [Seg("以"), _v(plan, "insured_name")]
        if has("insured_id_number"):
            clause += [*_k("（" + _words(_ID_WORDS, "insured_id_number", plan, rng) + "：", "insured_id_number"), _v(plan, "insured_id_number"),
                       Seg("）")]
        clause += [Seg("为"), Seg("被保险人", key="insured_name")]
        first.append(clause)
    if has("beneficiary_name"):
        if chance(rng, 0.5):
            first.append([Seg("指定"), _v(plan, "beneficiary_name"), Seg("为"), Seg("身故保险金受益人", key="beneficiary_name")])
        else:
            first.append([*_k("身故受益人为", "beneficiary_name"), _v(plan, "beneficiary_name")])
    if has("product_name"):
        if chance(rng, 0.6):
            first.append([Seg("向本公司投保《"), _v(plan, "product_name"), Seg("》")])
        else:
            first.append([Seg("向本公司投保"), _v(plan, "product_name")])
    else:
        first.append([Seg("向本公司投保本保险")])
    sentences.append(first)
    second: list[list[Seg]] = []
    if has("sum_insured"):
        second.append([*_k(_words(_SUM_WORDS, "sum_insured", plan, rng) + "为", "sum_insured"), _v(plan, "sum_insured")])
    if has("premium"):
        second.append([*_k(_words(_PREMIUM_WORDS, "premium", plan, rng) + "为", "premium"), _v(plan, "premium")])
    if has("effective_date") and has("expiry_date"):
        second.append([Seg("保险期间自"), _v(plan, "effective_date"), Seg("至"), _v(plan, "expiry_date")])
    elif has("effective_date"):
        second.append([*_k("本合同生效日为", "effective_date"), _v(plan, "effective_date")])
    elif has("expiry_date"):
        second.append([Seg("保险期间至"), _v(plan, "expiry_date")])
    if second:
        sentences.append(second)
    third: list[list[Seg]] = []
    if has("policyholder_address"):
        third.append([*_k("投保人通讯地址：", "policyholder_address"), _v(plan, "policyholder_address")])
    if has("policyholder_phone") and not phone_done:
        third.append([*_k(rng.choice(("联系电话：", "手机号码：")), "policyholder_phone"), _v(plan, "policyholder_phone")])
    if third:
        sentences.append(third)
    if has("issue_date"):
        sentences.append([[*_k("本保险单签发日期为", "issue_date"), _v(plan, "issue_date")]])
    segs: list[Seg] = []
    for sentence in sentences:
        for k, clause in enumerate(sentence):
            if k:
                segs.append(Seg("，"))
            segs += clause
        segs.append(Seg("。"))
    segs.append(Seg(plan.closing))
    return segs


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(16)
    pre = [e for e in plan.entries if e.section == "policy" and e.key in (None, "policy_number", "insurer", "issue_date")]
    for e in pre:
        y = draw_paragraph(canvas, pair_segs(e, st, plan.colon or "："), st.body, st.pitch, y)
    y += plan.px(10)
    elsewhere = {e.key for e in plan.entries if e.section in ("header", "footer")} | {e.key for e in pre}
    keys = {k for k, v in plan.field_text.items() if v is not None} - elsewhere - {"insurer"}
    indent = canvas.width_of("投保", st.body) if chance(rng, 0.7) else 0
    pitch = int(round(st.body.size * max(1.6, plan.line_factor)))
    y = draw_paragraph(canvas, paragraph(plan, rng, keys), st.body, pitch, y, indent=indent) + plan.px(12)
    rest = [e for e in plan.entries if e.key is None and e.section not in ("header", "footer", "policy")]
    half = (canvas.right - canvas.left) / 2
    col = 0
    for e in rest:
        segs = pair_segs(e, st, plan.colon or "：")
        if canvas.width_of(segs, st.small) < half - plan.px(16):
            canvas.text(canvas.left + col * half, y, segs, st.small)
            col = 1 - col
            if col == 0:
                y += st.small_pitch
        else:
            if col:
                y += st.small_pitch
                col = 0
            y = draw_paragraph(canvas, segs, st.small, st.small_pitch, y)
    if col:
        y += st.small_pitch
    y = draw_notices(canvas, plan, st, y + plan.px(10))
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
