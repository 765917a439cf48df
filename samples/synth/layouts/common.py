"""Pieces every layout family shares: text styles, label runs, header, section titles,
notices, footer and the company seal."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from samples.synth.canvas import Canvas, Color, Seg, TextStyle
from samples.synth.chinese import small_number
from samples.synth.fonts import face_font
from samples.synth.labels import SECTION_TITLES
from samples.synth.plan import SECTION_ORDER, DocPlan, Entry
from samples.synth.rand import chance

SIGN_OFFS: tuple[str, ...] = ("保险人签章", "公司签章", "（公司盖章）", "保险公司（盖章）", "承保机构签章")


@dataclass(frozen=True)
class Styles:
    body: TextStyle
    label_color: Color
    label_bold: bool
    small: TextStyle
    title: TextStyle
    section: TextStyle
    pitch: int
    small_pitch: int
    rule: Color
    tint: Color


def tint(color: Color, amount: float) -> Color:
    """``color`` mixed with white (``amount`` = share of white)."""
    return tuple(int(round(c + (255 - c) * amount)) for c in color)  # type: ignore[return-value]


def make_styles(plan: DocPlan, rng: random.Random) -> Styles:
    body = TextStyle(plan.face, plan.body_size, bold=False, color=plan.ink)
    label_color = rng.choice((plan.ink, plan.ink, (80, 80, 80), tint(plan.accent, 0.1)))
    return Styles(
        body=body,
        label_color=label_color,
        label_bold=chance(rng, 0.3),
        small=TextStyle(plan.face, plan.small_size, color=plan.ink),
        title=TextStyle(plan.face, plan.title_size, bold=True, color=rng.choice((plan.ink, plan.accent))),
        section=TextStyle(plan.face, plan.body_size + plan.px(rng.choice((0, 1, 2))), bold=True, color=plan.ink),
        pitch=int(round(plan.body_size * plan.line_factor)),
        small_pitch=int(round(plan.small_size * (plan.line_factor - 0.1))),
        rule=rng.choice(((60, 60, 60), (120, 120, 120), tint(plan.accent, 0.2))),
        tint=tint(plan.accent, rng.uniform(0.82, 0.92)),
    )


def label_seg(entry: Entry, st: Styles, colon: str) -> Seg:
    return Seg(entry.label + colon, color=st.label_color, bold=st.label_bold, atomic=True, key=entry.key)


def pair_segs(entry: Entry, st: Styles, colon: str) -> list[Seg]:
    """``label：value`` as one run; without a colon a space separates them."""
    sep = colon if colon else " "
    if colon == ":" and entry.value[0].text[:1].isascii():
        sep = ": "
    return [label_seg(entry, st, sep), *entry.value]


def body_groups(plan: DocPlan) -> list[tuple[str, list[Entry]]]:
    groups = []
    for section in SECTION_ORDER:
        group = [e for e in plan.entries if e.section == section]
        if group:
            groups.append((section, group))
    return groups


def section_title_text(section: str, number: int, rng: random.Random, numbered: bool) -> str:
    title = rng.choice(SECTION_TITLES[section])
    return f"{small_number(number)}、{title}" if numbered else title


def draw_section_title(canvas: Canvas, plan: DocPlan, st: Styles, text: str, y: int, kind: str) -> int:
    """Draw a section heading (``bar`` | ``plain`` | ``square`` | ``underline`` | ``bracket``); returns the next y."""
    size = st.section.size
    if kind == "bar":
        h = int(size * 1.6)
        canvas.rect(canvas.left, y, canvas.right, y + h, fill=st.tint)
        canvas.text(canvas.left + plan.px(10), y + (h - size) / 2, text, st.section)
        return y + h + plan.px(10)
    if kind == "square":
        s = int(size * 0.6)
        canvas.rect(canvas.left, y + (size - s) // 2 + 2, canvas.left + s, y + (size - s) // 2 + 2 + s, fill=plan.accent)
        canvas.text(canvas.left + s + plan.px(8), y, text, st.section)
        return y + int(size * 1.7)
    if kind == "underline":
        canvas.text(canvas.left, y, text, st.section)
        canvas.rule(canvas.left, y + size * 1.25, canvas.right, y + size * 1.25, plan.accent, max(1, plan.px(2)))
        return y + int(size * 1.9)
    if kind == "bracket":
        canvas.text(canvas.left, y, f"【{text}】", st.section)
        return y + int(size * 1.7)
    canvas.text(canvas.left, y, text, st.section)
    return y + int(size * 1.7)


def draw_logo(canvas: Canvas, plan: DocPlan, rng: random.Random, x: int, y: int, size: int) -> int:
    """A geometric mark (no glyphs) and the short company name; returns the right edge."""
    d = canvas.draw
    kind = rng.choice(("circle", "diamond", "square"))
    if kind == "circle":
        d.ellipse([x, y, x + size, y + size], fill=plan.accent)
        d.ellipse([x + size * 0.25, y + size * 0.25, x + size * 0.75, y + size * 0.75], fill=plan.paper)
    elif kind == "diamond":
        c = size / 2
        d.polygon([(x + c, y), (x + size, y + c), (x + c, y + size), (x, y + c)], fill=plan.accent)
    else:
        d.rounded_rectangle([x, y, x + size, y + size], radius=size // 5, fill=plan.accent)
        d.rectangle([x + size * 0.3, y + size * 0.3, x + size * 0.7, y + size * 0.7], fill=plan.paper)
    style = TextStyle(plan.face, max(8, int(size * 0.62)), bold=True, color=plan.accent)
    return int(canvas.text(x + size + plan.px(10), y + (size - style.size) / 2, plan.facts.company.short, style))


def draw_header(canvas: Canvas, plan: DocPlan, st: Styles, rng: random.Random) -> int:
    """Logo, insurer name (labelled as the ``insurer`` field), document title, header entries."""
    y = canvas.top
    if plan.logo:
        draw_logo(canvas, plan, rng, canvas.left, y, plan.px(44))
        y += plan.px(60)
    name = plan.facts.company.name
    title_style = st.title
    while canvas.width_of(name, title_style) > canvas.right - canvas.left and title_style.size > 10:
        title_style = title_style.with_(size=title_style.size - 1)
    canvas.text(canvas.width / 2, y, [Seg(name, field="insurer", atomic=True)], title_style, align="center")
    y += int(title_style.size * 1.45)
    sub = TextStyle(plan.face, max(8, int(plan.title_size * 0.78)), bold=True, color=plan.ink)
    canvas.text(canvas.width / 2, y, plan.title, sub, align="center")
    y += int(sub.size * 1.6)
    header_entries = [e for e in plan.entries if e.section == "header"]
    left_note = rng.choice((None, "币种：人民币", "单位：元", "金额单位：人民币元"))
    if header_entries or left_note:
        if left_note:
            canvas.text(canvas.left, y, left_note, st.small)
        x = float(canvas.right)
        for e in reversed(header_entries):
            segs = pair_segs(e, st, plan.colon or "：")
            canvas.text(x, y, segs, st.small, align="right")
            x -= canvas.width_of(segs, st.small) + plan.px(30)
        y += st.small_pitch
    if chance(rng, 0.7):
        canvas.rule(canvas.left, y, canvas.right, y, plan.accent, max(1, plan.px(rng.choice((1, 2, 3)))))
        y += plan.px(14)
    return y


def draw_paragraph(canvas: Canvas, segs: list[Seg], style: TextStyle, pitch: int, y: int,
                   indent: float = 0.0, x0: float | None = None, x1: float | None = None) -> int:
    """A wrapped paragraph; the first line may be indented. Returns the next y."""
    left = canvas.left if x0 is None else x0
    right = canvas.right if x1 is None else x1
    lines = canvas.wrap(segs, style, right - left - indent)
    if not lines:
        return y
    canvas.text(left + indent, y, lines[0], style)
    y += pitch
    rest = [s for line in lines[1:] for s in line]
    if rest:
        for line in canvas.wrap(rest, style, right - left):
            canvas.text(left, y, line, style)
            y += pitch
    return y


def draw_notices(canvas: Canvas, plan: DocPlan, st: Styles, y: int) -> int:
    if plan.special:
        y = draw_paragraph(canvas, [Seg("特别约定：", bold=True), Seg(plan.special)], st.small, st.small_pitch, y)
    if plan.notices:
        canvas.text(canvas.left, y, plan.notice_heading + "：", st.small.with_(bold=True))
        y += st.small_pitch
        for i, notice in enumerate(plan.notices, 1):
            y = draw_paragraph(canvas, [Seg(f"{i}. " if len(plan.notices) > 1 else ""), Seg(notice)], st.small,
                               st.small_pitch, y, indent=0)
    return y


def footer_height(plan: DocPlan, st: Styles) -> int:
    n = len([e for e in plan.entries if e.section == "footer"])
    return (n // 2 + n % 2 + 2) * st.small_pitch + plan.px(20)


def draw_footer(canvas: Canvas, plan: DocPlan, st: Styles, rng: random.Random, y: int) -> tuple[int, tuple[float, float]]:
    """Footer entries in two columns, sign-off line; returns next y and a seal centre near the sign-off."""
    entries = [e for e in plan.entries if e.section == "footer"]
    room = canvas.bottom - footer_height(plan, st)
    if room > y:
        y = int(y + (room - y) * rng.uniform(0.4, 1.0))
    if rng.random() < 0.6:
        canvas.rule(canvas.left, y, canvas.right, y, st.rule, 1)
        y += plan.px(10)
    half = (canvas.right - canvas.left) / 2
    col = 0
    for e in entries:
        segs = pair_segs(e, st, plan.colon or "：")
        fits_half = canvas.width_of(segs, st.small) < half - plan.px(20)
        if col == 1 and not fits_half:
            y += st.small_pitch
            col = 0
        if fits_half:
            canvas.text(canvas.left + col * half, y, segs, st.small)
            col = 1 - col
            if col == 0:
                y += st.small_pitch
        else:
            y = draw_paragraph(canvas, segs, st.small, st.small_pitch, y)
    if col == 1:
        y += st.small_pitch
    sign = rng.choice(SIGN_OFFS)
    x_right = canvas.right - plan.px(rng.randint(0, 80))
    canvas.text(x_right, y, sign, st.body, align="right")
    seal_center = (x_right - canvas.width_of(sign, st.body) / 2 + plan.px(rng.randint(-30, 30)),
                   y + plan.px(rng.randint(-30, 30)))
    y += st.pitch
    return y, seal_center


def draw_seal(canvas: Canvas, plan: DocPlan, rng: random.Random, center: tuple[float, float]) -> None:
    """A semi-transparent red company seal (ring, curved company name, star), multiplied over the
    page. Its curved text is graphics, not a recorded text line."""
    r = plan.px(rng.randint(78, 100))
    size = 2 * r + 4
    mask = Image.new("L", (size, size), 0)
    d = ImageDraw.Draw(mask)
    c = size / 2
    ring = max(2, int(r * 0.06))
    d.ellipse([c - r, c - r, c + r, c + r], outline=255, width=ring)
    star_r = r * 0.28
    pts = []
    for k in range(10):
        ang = -math.pi / 2 + k * math.pi / 5
        rad = star_r if k % 2 == 0 else star_r * 0.4
        pts.append((c + rad * math.cos(ang), c + rad * math.sin(ang)))
    d.polygon(pts, fill=255)
    name = plan.facts.company.name
    font, _ = face_font(plan.face, max(8, int(r * 0.26)), True)
    span = math.radians(rng.uniform(230, 260))
    for k, ch in enumerate(name):
        ang = -math.pi / 2 - span / 2 + span * (k + 0.5) / len(name)
        glyph = Image.new("L", (font.size * 2, font.size * 2), 0)
        ImageDraw.Draw(glyph).text((font.size, font.size), ch, font=font, fill=255, anchor="mm")
        glyph = glyph.rotate(-math.degrees(ang) - 90, resample=Image.Resampling.BICUBIC)
        gx = c + (r - ring - font.size * 0.75) * math.cos(ang) - font.size
        gy = c + (r - ring - font.size * 0.75) * math.sin(ang) - font.size
        mask.paste(255, (int(gx), int(gy)), glyph)
    mask = mask.rotate(rng.uniform(-25, 25), resample=Image.Resampling.BICUBIC)
    alpha = np.asarray(mask, dtype=np.float32) / 255.0 * rng.uniform(0.55, 0.8)
    page = np.asarray(canvas.image, dtype=np.float32)
    x0, y0 = int(center[0] - c), int(center[1] - c)
    xa, ya = max(0, x0), max(0, y0)
    xb, yb = min(canvas.width, x0 + size), min(canvas.height, y0 + size)
    if xb <= xa or yb <= ya:
        return
    a = alpha[ya - y0: yb - y0, xa - x0: xb - x0, None]
    red = np.array(rng.choice(((205, 40, 40), (220, 30, 50), (190, 45, 35))), dtype=np.float32) / 255.0
    region = page[ya:yb, xa:xb]
    page[ya:yb, xa:xb] = region * (1 - a * (1 - red))
    canvas.image.paste(Image.fromarray(np.clip(page, 0, 255).astype(np.uint8)))
