"""Everything a document will show, decided before drawing: family, font, sizes, colours,
labels, printed values, distractors and boilerplate. A plan depends only on (seed, split, index)."""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from samples.synth import formats, labels, vocab
from samples.synth.canvas import Color, Seg
from samples.synth.facts import FIELD_KEYS, PolicyFacts, make_facts
from samples.synth.few_shot import FewShotFamily
from samples.synth.fonts import DEV_ONLY_FACES, FACES, FontFace
from samples.synth.rand import chance, py_rng, weighted
from samples.synth.few_shot import FEW_SHOT_FAMILIES
from samples.synth.wordings import swap_labels
from samples.synth.splits import (
    FONT_WEIGHTS, HELD_OUT_FAMILIES, HELD_OUT_FONTS, SHARED_FAMILIES, SHARED_FONTS, SplitPolicy, policy_for,
)

SECTION_ORDER: tuple[str, ...] = ("policy", "policyholder", "insured", "beneficiary", "coverage", "other")
REFERENCE_LONG_SIDE = 1400
_ATOMIC_FIELDS = frozenset({
    "policy_number", "policyholder_name", "policyholder_id_number", "policyholder_phone", "insured_name",
    "insured_id_number", "beneficiary_name", "effective_date", "expiry_date", "issue_date",
})
_INKS: tuple[Color, ...] = ((20, 20, 20), (35, 35, 35), (15, 25, 60), (45, 40, 40))
_ACCENTS: tuple[Color, ...] = ((30, 80, 160), (170, 35, 35), (20, 110, 80), (90, 90, 90), (20, 100, 130), (120, 60, 20))
_PAPERS: tuple[Color, ...] = ((255, 255, 255), (255, 255, 255), (250, 248, 240), (246, 246, 242), (252, 250, 245))


@dataclass(frozen=True)
class Entry:
    """A label–value pair on the page: a field (``key`` set) or a distractor (``key`` None)."""

    label: str
    value: tuple[Seg, ...]
    key: str | None
    section: str
    wide: bool = False


@dataclass(frozen=True)
class DocPlan:
    seed: int
    split: str
    index: int
    family: str
    face: FontFace
    scale: float  # long side / 1400
    body_size: int
    small_size: int
    title_size: int
    line_factor: float  # line pitch / font size
    ink: Color
    accent: Color
    paper: Color
    colon: str
    sectioned: bool
    title: str
    logo: bool
    entries: tuple[Entry, ...]
    notice_heading: str
    notices: tuple[str, ...]
    special: str | None
    closing: str
    seal: bool
    facts: PolicyFacts
    field_text: dict[str, str | None]
    fields: dict[str, str | None]
    layout_seed: int
    compact_level: int = 0
    dev_wordings: tuple[tuple[str, str], ...] = ()  # (field, label) printed in a withheld wording (synth.wordings)

    def px(self, reference_px: float) -> int:
        """A length given at the 1400 px reference, at this page's scale."""
        return max(1, int(round(reference_px * self.scale)))


def _value_seg(key: str, text: str) -> Seg:
    atomic = key in _ATOMIC_FIELDS or " " in text or len(text) <= 14
    return Seg(text, field=key, atomic=atomic)


def _printed_values(facts: PolicyFacts, rng: random.Random) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """``field_text`` (as printed) and ``fields`` (normalized) for every key."""
    doc_date_style = rng.choice(formats.DATE_STYLES)
    phone_style = rng.choice(formats.PHONE_STYLES)

    def date_style() -> str:
        return doc_date_style if chance(rng, 0.8) else rng.choice(formats.DATE_STYLES)

    policy_number = formats.make_policy_number(rng, facts.issue.year)
    ph, ins = facts.policyholder, facts.insured
    eff_style, exp_style, iss_style = date_style(), date_style(), date_style()
    text: dict[str, str | None] = {
        "policy_number": policy_number,
        "insurer": facts.company.name,
        "product_name": facts.product,
        "policyholder_name": formats.print_name(ph.name, rng),
        "policyholder_id_number": formats.print_id(ph.id_number, rng),
        "policyholder_phone": formats.print_phone(ph.phone, phone_style),
        "policyholder_address": ph.address,
        "insured_name": formats.print_name(ins.name, rng),
        "insured_id_number": formats.print_id(ins.id_number, rng),
        "beneficiary_name": formats.print_beneficiary(facts.beneficiary, rng) if facts.beneficiary else None,
        "sum_insured": formats.print_amount(facts.sum_cents, rng.choice(formats.AMOUNT_STYLES), rng),
        "premium": formats.print_amount(facts.premium_cents, rng.choice(formats.AMOUNT_STYLES), rng),
        "effective_date": formats.print_date(facts.effective, eff_style) + formats.date_suffix("effective", eff_style, rng),
        "expiry_date": formats.print_date(facts.expiry, exp_style) + formats.date_suffix("expiry", exp_style, rng),
        "issue_date": formats.print_date(facts.issue, iss_style),
    }
    norm: dict[str, str | None] = {
        "policy_number": formats.normalize_policy_number(policy_number),
        "insurer": formats.normalize_text(facts.company.name),
        "product_name": formats.normalize_text(facts.product),
        "policyholder_name": ph.name,
        "policyholder_id_number": ph.id_number,
        "policyholder_phone": ph.phone,
        "policyholder_address": formats.normalize_text(ph.address),
        "insured_name": ins.name,
        "insured_id_number": ins.id_number,
        "beneficiary_name": facts.beneficiary,
        "sum_insured": formats.amount_value(facts.sum_cents),
        "premium": formats.amount_value(facts.premium_cents),
        "effective_date": facts.effective.isoformat(),
        "expiry_date": facts.expiry.isoformat(),
        "issue_date": facts.issue.isoformat(),
    }
    for key in facts.absent:
        text[key] = None
        norm[key] = None
    if text["beneficiary_name"] is None:
        norm["beneficiary_name"] = None
    return text, norm


def _decorate(label: str, rng: random.Random, spaced_p: float) -> str:
    if 2 <= len(label) <= 3 and chance(rng, spaced_p):
        return labels.spaced(label, rng.choice((" ", "\u3000")))
    return label


def _field_entries(text: dict[str, str | None], policy: SplitPolicy, rng: random.Random, sectioned: bool,
                   spaced_p: float, period_p: float = 0.35) -> list[Entry]:
    section_of = {
        "policy_number": "policy", "insurer": "policy",
        "product_name": rng.choice(("policy", "coverage")),
        "policyholder_name": "policyholder", "policyholder_id_number": "policyholder",
        "policyholder_phone": "policyholder", "policyholder_address": "policyholder",
        "insured_name": "insured", "insured_id_number": "insured",
        "beneficiary_name": "beneficiary" if sectioned and chance(rng, 0.6) else "insured",
        "sum_insured": "coverage", "premium": "coverage", "effective_date": "coverage", "expiry_date": "coverage",
        "issue_date": rng.choice(("policy", "coverage", "footer")),
    }
    if chance(rng, 0.3):
        section_of["policy_number"] = "header"
    entries: list[Entry] = []
    period = (text["effective_date"] is not None and text["expiry_date"] is not None and chance(rng, period_p))
    for key in FIELD_KEYS:
        value = text[key]
        if value is None or (key == "insurer" and not chance(rng, 0.4)):
            continue
        if period and key in ("effective_date", "expiry_date"):
            continue
        section = section_of[key]
        home = key.split("_")[0]  # policyholder | insured | beneficiary
        if sectioned and key in labels.SECTION_LABELS and section == home and chance(rng, 0.55):
            label = rng.choice(labels.SECTION_LABELS[key])
        else:
            label = labels.field_label(key, rng, policy.held_out_label_p)
        wide = key in ("policyholder_address", "insurer") or len(value) > 22
        entries.append(Entry(_decorate(label, rng, spaced_p), (_value_seg(key, value),), key, section, wide))
    if period:
        pool = labels.PERIOD_LABELS + (labels.PERIOD_HELD_OUT if policy.held_out_label_p > 0 else ())
        eff, exp = text["effective_date"], text["expiry_date"]
        assert eff is not None and exp is not None
        joiner = rng.choice((("自", "至"), ("自", "起至"), ("", "至"), ("", " - "))) if not eff.endswith("起") \
            else rng.choice((("自", "至"), ("", "至")))
        value_segs: list[Seg] = []
        if joiner[0]:
            value_segs.append(Seg(joiner[0], atomic=True))
        value_segs += [Seg(eff, field="effective_date", atomic=True), Seg(joiner[1], atomic=True),
                       Seg(exp, field="expiry_date", atomic=True)]
        entries.append(Entry(rng.choice(pool), tuple(value_segs), "period", "coverage", True))
    return entries


def _distractors(facts: PolicyFacts, rng: random.Random, count: int, date_style: str) -> list[Entry]:
    ins = facts.insured
    birth = formats.print_date(ins.birth, date_style)
    printed_at = facts.issue + dt.timedelta(days=rng.randint(0, 400))
    account = f"{rng.choice(('6222', '6217', '6228', '6214'))} **** **** {rng.randint(0, 9999):04d}"
    pool: list[tuple[tuple[str, ...], str, str, bool]] = [
        (("代理人", "业务员", "营销员", "服务人员", "代理人姓名"), facts.agent_name, "other", False),
        (("代理人编码", "业务员工号", "代理人代码", "工号", "营销员编号"), facts.agent_code, "other", False),
        (("客服电话", "服务热线", "全国统一客服电话", "客户服务热线"), facts.company.hotline, "footer", False),
        (("公司地址", "总公司地址", "服务地址", "营业场所"), facts.company.address, "footer", True),
        (("邮政编码", "邮编"), facts.company.postcode, "footer", False),
        (("网址", "公司网址", "官方网站"), facts.company.website, "footer", False),
        (("性别", "被保险人性别"), "男" if ins.male else "女", "insured", False),
        (("出生日期", "被保险人出生日期"), birth, "insured", False),
        (("与投保人关系",), facts.relation, "insured", False),
        (("证件类型",), "居民身份证", "policyholder", False),
        (("缴费方式", "交费方式"), facts.payment_mode, "coverage", False),
        (("缴费期间", "交费期间", "交费年期"), facts.payment_years, "coverage", False),
        (("保障期限",), facts.term_text, "coverage", False),
        (("管理机构", "出单机构", "营业机构"), facts.company.short + facts.branch, "policy", False),
        (("销售渠道",), rng.choice(vocab.CHANNELS), "other", False),
        (("打印时间",), f"{printed_at:%Y-%m-%d} {rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
         "footer", False),
        (("币种",), "人民币", "coverage", False),
        (("交费账号", "银行账号", "授权账号"), account, "other", False),
        (("开户银行",), rng.choice(vocab.BANKS), "other", False),
        (("职业类别",), f"第{rng.randint(1, 4)}类", "insured", False),
        (("犹豫期",), rng.choice(("15日", "15天", "20日")), "other", False),
    ]
    chosen = rng.sample(pool, min(count, len(pool)))
    chosen.sort(key=lambda item: pool.index(item))
    return [Entry(rng.choice(labs), (Seg(val, atomic=len(val) <= 14 or " " in val),), None, sec, wide)
            for labs, val, sec, wide in chosen]


def _order(entries: list[Entry], rng: random.Random) -> tuple[Entry, ...]:
    out: list[Entry] = []
    for section in ("header", *SECTION_ORDER, "footer"):
        group = [e for e in entries if e.section == section]
        if len(group) > 2 and chance(rng, 0.3):  # occasionally a different order inside a section
            i, j = rng.sample(range(len(group)), 2)
            group[i], group[j] = group[j], group[i]
        out += group
    return tuple(out)


def _choose_face(policy: SplitPolicy, rng: random.Random) -> FontFace:
    pool = HELD_OUT_FONTS if chance(rng, policy.held_out_font_p) else SHARED_FONTS
    return FACES[weighted(rng, {name: FONT_WEIGHTS[name] for name in pool})]


def _few_shot_entries(entries: list[Entry], spec: FewShotFamily) -> list[Entry]:
    """A few-shot family's fixed layout: each field under its family label, in registry order in a fixed section."""
    home = {"policy_number": "policy", "insurer": "policy", "product_name": "policy", "beneficiary_name": "insured"}
    fields = {e.key: e for e in entries if e.key is not None}
    person = ("policyholder", "insured")
    out = [replace(fields[key], label=spec.labels[key],
                   section=home.get(key, key.split("_")[0] if key.startswith(person) else "coverage"))
           for key in FIELD_KEYS if key in fields]
    return out + [e for e in entries if e.key is None]


def make_plan(seed: int, split: str, index: int, long_side: int = REFERENCE_LONG_SIDE,
              family: str | None = None, wordings: Mapping[str, Sequence[str]] | None = None,
              fonts: Sequence[str] = ()) -> DocPlan:
    """The plan of document ``index`` of ``split`` for corpus ``seed``; ``family`` forces the layout family
    (a few-shot family of :data:`samples.synth.few_shot.FEW_SHOT_FAMILIES` also fixes its labels and layout);
    ``wordings`` (dev only) swaps some field labels for withheld wordings (:mod:`samples.synth.wordings`);
    ``fonts`` (dev only) prints the document in one of these faces of :data:`~samples.synth.fonts.DEV_ONLY_FACES`,
    drawn per document, in place of the split's own."""
    if (wordings or fonts) and split != "dev":
        raise ValueError("withheld wordings and dev-only fonts are for dev draws only")
    unknown = [f for f in fonts if f not in DEV_ONLY_FACES]
    if unknown:
        raise ValueError(f"not a dev-only face: {', '.join(unknown)} (one of {', '.join(DEV_ONLY_FACES)})")
    plan = _make_plan(seed, split, index, long_side, family)
    if fonts:
        plan = replace(plan, face=DEV_ONLY_FACES[py_rng(seed, split, index, "dev_font").choice(sorted(fonts))])
    if not wordings or plan.family == "narrative":  # narrative sentences word their labels themselves
        return plan
    entries, swapped = swap_labels(plan.entries, wordings, py_rng(seed, split, index, "wordings"))
    return replace(plan, entries=tuple(entries), dev_wordings=tuple(sorted(swapped.items())))


def _make_plan(seed: int, split: str, index: int, long_side: int, family: str | None) -> DocPlan:
    policy = policy_for(split)
    facts = make_facts(py_rng(seed, split, index, "facts"))
    rng = py_rng(seed, split, index, "plan")
    drawn = rng.choice(HELD_OUT_FAMILIES) if chance(rng, policy.held_out_family_p) else rng.choice(SHARED_FAMILIES)
    spec = FEW_SHOT_FAMILIES.get(family) if family is not None else None
    if spec is not None:
        return _few_shot_plan(seed, split, index, long_side, facts, rng, spec)
    family = family or drawn
    face = _choose_face(policy, rng)
    scale = long_side / REFERENCE_LONG_SIDE
    dense = family in ("dotted_leaders", "kv_lines")
    body_ref = rng.randint(22, 24) if dense or family in ("label_above", "column_table") else rng.randint(22, 26)
    sectioned = family != "narrative" and family != "dotted_leaders" and chance(rng, 0.5)
    colon = weighted(rng, labels.COLONS)
    if family in ("ruled_table", "label_above", "column_table", "underline_form") and chance(rng, 0.6):
        colon = ""
    if family in ("kv_lines", "two_column", "dotted_leaders") and colon == "" and chance(rng, 0.5):
        colon = "："
    spaced_p = 0.25 if chance(rng, 0.3) else 0.0
    field_text, fields = _printed_values(facts, rng)
    entries = _field_entries(field_text, policy, rng, sectioned, spaced_p)
    n_distract = {"dotted_leaders": (2, 5), "kv_lines": (2, 5), "narrative": (4, 8), "two_column": (4, 8)}.get(
        family, (3, 6))
    entries += _distractors(facts, rng, rng.randint(*n_distract), rng.choice(formats.DATE_STYLES))
    notices = tuple(rng.sample(vocab.NOTICES, rng.randint(1, 4)))
    special = None
    if chance(rng, 0.6):
        special = rng.choice(vocab.SPECIAL_TERMS).format(
            deductible=rng.choice((0, 100, 500, 1000, 10000)), ratio=rng.choice((80, 90, 100)), klass=rng.randint(1, 4))
    return DocPlan(
        seed=seed, split=split, index=index, family=family, face=face, scale=scale,
        body_size=max(8, round(body_ref * scale)),
        small_size=max(8, round(max(21, body_ref - rng.randint(1, 3)) * scale)),
        title_size=max(10, round(rng.randint(34, 46) * scale)),
        line_factor=rng.uniform(1.45, 1.75),
        ink=rng.choice(_INKS), accent=rng.choice(_ACCENTS), paper=rng.choice(_PAPERS),
        colon=colon, sectioned=sectioned,
        title=rng.choice(vocab.TITLES), logo=chance(rng, 0.6),
        entries=_order(entries, rng),
        notice_heading=rng.choice(vocab.NOTICE_HEADINGS), notices=notices, special=special,
        closing=rng.choice(vocab.CLOSINGS), seal=chance(rng, 0.65),
        facts=facts, field_text=field_text, fields=fields,
        layout_seed=rng.getrandbits(63),
    )


def compact(plan: DocPlan, level: int) -> DocPlan:
    """A more compact version of ``plan`` for when content overflows the page (levels 1..8).

    Boilerplate and distractors go first; fonts shrink only from level 4 and stay at or above
    21 px (body) / 20 px (small print) at the 1400 px reference until level 6.
    """
    if level <= 0:
        return plan
    entries = plan.entries
    notices = plan.notices[:1]
    special = plan.special
    line_factor = max(1.3, plan.line_factor - 0.1 * min(level, 3))
    body, small, title = plan.body_size, plan.small_size, plan.title_size
    if level >= 2:
        special = None
        distract = [e for e in entries if e.key is None]
        drop = {id(e) for e in distract[len(distract) // 2:]}
        entries = tuple(e for e in entries if id(e) not in drop)
    if level >= 3:
        notices = ()
        entries = tuple(e for e in entries if e.key is not None)
    if level >= 4:
        shrink = 1.0 - 0.05 * (level - 3)
        floor_body = plan.px(21) if level < 6 else 8
        floor_small = plan.px(20) if level < 6 else 8
        body = max(min(body, floor_body), int(round(body * shrink)))
        small = max(min(small, floor_small), int(round(small * shrink)))
        title = max(10, int(round(title * shrink)))
    return replace(plan, entries=entries, notices=notices, special=special, line_factor=line_factor,
                   body_size=body, small_size=small, title_size=title, compact_level=level)


def _few_shot_plan(seed: int, split: str, index: int, long_side: int, facts: PolicyFacts, rng: random.Random,
                   spec: FewShotFamily) -> DocPlan:
    """A document of a few-shot family: its fixed labels, colon and order, no sections, no period label."""
    face = _choose_face(policy_for(split), rng)
    scale = long_side / REFERENCE_LONG_SIDE
    body_ref = rng.randint(22, 24)
    field_text, fields = _printed_values(facts, rng)
    entries = _field_entries(field_text, policy_for(split), rng, False, 0.0, period_p=0.0)
    entries = _few_shot_entries(entries, spec)
    distract = [e for e in _distractors(facts, rng, rng.randint(2, 4), rng.choice(formats.DATE_STYLES))
                if e.section not in ("policyholder", "insured")]
    notices = tuple(rng.sample(vocab.NOTICES, rng.randint(1, 3)))
    return DocPlan(
        seed=seed, split=split, index=index, family=spec.name, face=face, scale=scale,
        body_size=max(8, round(body_ref * scale)),
        small_size=max(8, round(max(21, body_ref - rng.randint(1, 3)) * scale)),
        title_size=max(10, round(rng.randint(34, 46) * scale)),
        line_factor=rng.uniform(1.45, 1.75),
        ink=rng.choice(_INKS), accent=rng.choice(_ACCENTS), paper=rng.choice(_PAPERS),
        colon=spec.colon, sectioned=False,
        title=rng.choice(vocab.TITLES), logo=chance(rng, 0.6),
        entries=tuple(entries + distract),
        notice_heading=rng.choice(vocab.NOTICE_HEADINGS), notices=notices, special=None,
        closing=rng.choice(vocab.CLOSINGS), seal=chance(rng, 0.65),
        facts=facts, field_text=field_text, fields=fields,
        layout_seed=rng.getrandbits(63),
    )
