"""A two-column form without rules: ``label：value`` pairs fill the left and right columns; long
values take a full row."""
from __future__ import annotations

import random

from samples.synth.canvas import Canvas
from samples.synth.layouts.common import (
    body_groups, draw_footer, draw_header, draw_notices, draw_paragraph, draw_seal, draw_section_title,
    label_seg, make_styles, pair_segs, section_title_text,
)
from samples.synth.plan import DocPlan
from samples.synth.rand import chance


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(10)
    gutter = plan.px(30)
    col_w = (canvas.right - canvas.left - gutter) / 2
    columns = (canvas.left, canvas.left + col_w + gutter)
    title_kind = rng.choice(("plain", "square", "underline", "bar", "bracket"))
    numbered = chance(rng, 0.4)
    boxed = chance(rng, 0.35)
    label_col = chance(rng, 0.4)  # labels in a fixed-width column, values beside them (separate lines)
    for number, (section, entries) in enumerate(body_groups(plan), 1):
        if plan.sectioned:
            y = draw_section_title(canvas, plan, st, section_title_text(section, number, rng, numbered), y, title_kind)
        top = y
        col = 0
        for entry in entries:
            segs = pair_segs(entry, st, plan.colon)
            label_w = canvas.width_of([label_seg(entry, st, plan.colon)], st.body)
            fits = not entry.wide and canvas.width_of(segs, st.body) <= col_w - plan.px(10)
            if not fits:
                if col == 1:
                    y += st.pitch
                    col = 0
                y = draw_paragraph(canvas, segs, st.body, st.pitch, y)
                continue
            x = columns[col]
            if label_col:
                value_w = canvas.width_of(list(entry.value), st.body)
                vx = max(label_w + plan.px(12), col_w * 0.38)
                if vx + value_w > col_w:
                    vx = label_w + plan.px(12)
                canvas.text(x, y, [label_seg(entry, st, plan.colon)], st.body)
                canvas.text(x + vx, y, list(entry.value), st.body)
            else:
                canvas.text(x, y, segs, st.body)
            col = 1 - col
            if col == 0:
                y += st.pitch
        if col == 1:
            y += st.pitch
        if boxed:
            canvas.rect(canvas.left - plan.px(10), top - plan.px(8), canvas.right + plan.px(10), y - plan.px(4),
                        outline=st.rule, width=1)
        y += plan.px(rng.randint(8, 18))
    y = draw_notices(canvas, plan, st, y)
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
