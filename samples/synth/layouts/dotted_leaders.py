"""Dotted leaders: ``投保人……………张三`` — label at the left margin, leader dots, value at the right
(or at a fixed column); the leaders are printed characters and part of the line text."""
from __future__ import annotations

import random

from samples.synth.canvas import Canvas, Seg
from samples.synth.layouts.common import (
    body_groups, draw_footer, draw_header, draw_notices, draw_paragraph, draw_seal, label_seg, make_styles,
)
from samples.synth.plan import DocPlan
from samples.synth.rand import chance

LEADERS: tuple[str, ...] = ("…", "·", ".", "-")


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(10)
    leader = rng.choice(LEADERS)
    leader_color = rng.choice((plan.ink, (110, 110, 110)))
    colon = plan.colon if chance(rng, 0.25) else ""
    indent = plan.px(rng.choice((0, 20, 40)))
    x0 = canvas.left + indent
    right_aligned = chance(rng, 0.6)
    value_col = x0 + (canvas.right - x0) * rng.uniform(0.42, 0.55)
    lead_w = canvas.width_of(leader, st.body)
    for _section, entries in body_groups(plan):
        for entry in entries:
            label = label_seg(entry, st, colon)
            label_w = canvas.width_of([label], st.body)
            value_w = canvas.width_of(list(entry.value), st.body)
            end = canvas.right - plan.px(4) - value_w if right_aligned else value_col
            n = int((end - x0 - label_w) // lead_w)
            if n < 3 or (not right_aligned and value_col + value_w > canvas.right):
                n = max(3, int((canvas.right - x0 - label_w - value_w) // lead_w) - 1) if right_aligned else 4
                segs = [label, Seg(leader * n, color=leader_color, atomic=True), *entry.value]
                y = draw_paragraph(canvas, segs, st.body, st.pitch, y, x0=x0)
                continue
            segs = [label, Seg(leader * n, color=leader_color, atomic=True), *entry.value]
            canvas.text(x0, y, segs, st.body)
            y += st.pitch
        y += plan.px(rng.randint(2, 10))
    y = draw_notices(canvas, plan, st, y + plan.px(6))
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
