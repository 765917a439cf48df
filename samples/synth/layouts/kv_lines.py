"""``key：value`` lines, one pair per line, optionally grouped under section headings; values either
follow their label or start at a common column."""
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
    aligned = chance(rng, 0.45)
    title_kind = rng.choice(("plain", "square", "underline", "bracket", "bar"))
    numbered = chance(rng, 0.5)
    indent = plan.px(rng.choice((0, 0, 20, 40))) if plan.sectioned else 0
    x0 = canvas.left + indent
    groups = body_groups(plan)
    label_w = max(canvas.width_of([label_seg(e, st, plan.colon)], st.body) for _, g in groups for e in g)
    value_x = x0 + label_w + plan.px(16)
    for number, (section, entries) in enumerate(groups, 1):
        if plan.sectioned:
            y = draw_section_title(canvas, plan, st, section_title_text(section, number, rng, numbered), y, title_kind)
        for entry in entries:
            if aligned and value_x < canvas.right - plan.px(250):
                canvas.text(x0, y, [label_seg(entry, st, plan.colon)], st.body)
                y = draw_paragraph(canvas, list(entry.value), st.body, st.pitch, y, x0=value_x)
            else:
                y = draw_paragraph(canvas, pair_segs(entry, st, plan.colon), st.body, st.pitch, y, x0=x0)
        y += plan.px(rng.randint(4, 16))
    y = draw_notices(canvas, plan, st, y + plan.px(6))
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
