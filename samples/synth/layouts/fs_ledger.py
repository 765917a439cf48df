"""Few-shot family ``fs_ledger``: one fixed layout of aligned ``label：value`` lines, no sections (the wordings
are :data:`samples.synth.few_shot.FEW_SHOT_FAMILIES`)."""
from __future__ import annotations

import random

from samples.synth.canvas import Canvas
from samples.synth.layouts.common import (
    body_groups, draw_footer, draw_header, draw_notices, draw_paragraph, draw_seal, label_seg, make_styles,
)
from samples.synth.plan import DocPlan


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(10)
    x0 = canvas.left
    entries = [e for _, group in body_groups(plan) for e in group]
    label_w = max(canvas.width_of([label_seg(e, st, plan.colon)], st.body) for e in entries)
    value_x = x0 + label_w + plan.px(24)
    for entry in entries:
        canvas.text(x0, y, [label_seg(entry, st, plan.colon)], st.body)
        y = draw_paragraph(canvas, list(entry.value), st.body, st.pitch, y, x0=value_x)
    y = draw_notices(canvas, plan, st, y + plan.px(12))
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
