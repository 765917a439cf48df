"""Fill-in form (held out of train/dev): printed labels followed by blanks, the values typed on
the underlines, often in another colour and typeface."""
from __future__ import annotations

import random

from samples.synth.canvas import Canvas
from samples.synth.fonts import FACES
from samples.synth.layouts.common import (
    body_groups, draw_footer, draw_header, draw_notices, draw_seal, draw_section_title, label_seg, make_styles,
    section_title_text,
)
from samples.synth.plan import DocPlan
from samples.synth.rand import chance


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(10)
    value_face = FACES["Noto Sans Mono CJK SC"] if chance(rng, 0.4) else plan.face
    value_style = st.body.with_(face=value_face, color=rng.choice((plan.ink, (20, 30, 110), (30, 30, 30))))
    gap = plan.px(10)
    cw = canvas.right - canvas.left
    half = (cw - plan.px(30)) / 2
    title_kind = rng.choice(("plain", "square", "bracket", "underline"))
    numbered = chance(rng, 0.5)
    line_color = rng.choice(((60, 60, 60), (110, 110, 110), plan.ink))
    pitch = int(st.pitch * 1.1)
    for number, (section, entries) in enumerate(body_groups(plan), 1):
        if plan.sectioned:
            y = draw_section_title(canvas, plan, st, section_title_text(section, number, rng, numbered), y, title_kind)
        col = 0
        for e in entries:
            label = label_seg(e, st, plan.colon)
            label_w = canvas.width_of([label], st.body)
            value_w = canvas.width_of(list(e.value), value_style)
            slot_w = half if (not e.wide and label_w + gap + value_w + plan.px(30) <= half) else cw
            if slot_w == cw and col == 1:
                y += pitch
                col = 0
            x = canvas.left + col * (half + plan.px(30))
            canvas.text(x, y, [label], st.body)
            vx = x + label_w + gap
            lines = canvas.wrap(list(e.value), value_style, x + slot_w - vx - plan.px(14))
            for k, line in enumerate(lines):
                base = y + st.body.size + plan.px(5)
                canvas.rule(vx, base, x + slot_w - plan.px(6), base, line_color, 1)
                canvas.text(vx + plan.px(14), y - plan.px(2), line, value_style)
                if k < len(lines) - 1:
                    y += pitch
            if slot_w == cw:
                y += pitch
            else:
                col = 1 - col
                if col == 0:
                    y += pitch
        if col == 1:
            y += pitch
        y += plan.px(rng.randint(6, 14))
    y = draw_notices(canvas, plan, st, y + plan.px(6))
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
