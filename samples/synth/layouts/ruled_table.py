"""A ruled table: label cell | value cell, one or two pairs per row, optional shaded section rows."""
from __future__ import annotations

import random

from samples.synth.canvas import Canvas, Seg
from samples.synth.layouts.common import (
    body_groups, draw_footer, draw_header, draw_notices, draw_seal, label_seg, make_styles, section_title_text,
)
from samples.synth.layouts.tablekit import Cell, draw_row
from samples.synth.plan import DocPlan, Entry
from samples.synth.rand import chance


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(6)
    pad = plan.px(rng.randint(5, 10))
    cw = canvas.right - canvas.left
    two_pair = chance(rng, 0.7)
    groups = body_groups(plan)
    widest_label = max(canvas.width_of([label_seg(e, st, plan.colon)], st.body) for _, g in groups for e in g)
    lw = min(max(widest_label + 2 * pad + 2, cw * 0.14), cw * (0.24 if two_pair else 0.3))
    vw = (cw - 2 * lw) / 2 if two_pair else cw - lw
    label_fill = st.tint if chance(rng, 0.5) else None
    label_align = "center" if chance(rng, 0.4) else "left"
    numbered = chance(rng, 0.4)
    x = canvas.left
    for number, (section, entries) in enumerate(groups, 1):
        if plan.sectioned:
            title = section_title_text(section, number, rng, numbered)
            y = draw_row(canvas, [Cell(x, canvas.right, (Seg(title),), st.section, "left", st.tint)], y, pad, st.rule)
        rows: list[list[Entry]] = []
        pending: Entry | None = None
        for e in entries:
            single = not e.wide and canvas.width_of(list(e.value), st.body) <= vw - 2 * pad
            if two_pair and single:
                if pending is None:
                    pending = e
                else:
                    rows.append([pending, e])
                    pending = None
                continue
            if pending is not None:
                rows.append([pending])
                pending = None
            rows.append([e])
        if pending is not None:
            rows.append([pending])
        for row in rows:
            cells: list[Cell] = []
            cx = x
            for k, e in enumerate(row):
                last = k == len(row) - 1
                cells.append(Cell(cx, cx + lw, (label_seg(e, st, plan.colon),), st.body, label_align, label_fill))
                cx += lw
                x1 = canvas.right if last else cx + vw
                cells.append(Cell(cx, x1, e.value, st.body))
                cx = x1
            y = draw_row(canvas, cells, y, pad, st.rule)
        y += plan.px(rng.choice((0, 0, 12)))
    y += plan.px(14)
    y = draw_notices(canvas, plan, st, y)
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
