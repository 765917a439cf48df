"""Label-above-value boxes: a grid of boxes, each with a small label at the top and the value below."""
from __future__ import annotations

import random

from samples.synth.canvas import Canvas, Overflow, Seg
from samples.synth.layouts.common import (
    body_groups, draw_footer, draw_header, draw_notices, draw_seal, draw_section_title, make_styles,
    section_title_text,
)
from samples.synth.plan import DocPlan, Entry
from samples.synth.rand import chance


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(8)
    n_cols = rng.choice((2, 3, 3, 4)) if not plan.sectioned else rng.choice((3, 3, 4))
    gap = plan.px(rng.choice((0, 8, 12)))
    cw = canvas.right - canvas.left
    box_w = (cw - gap * (n_cols - 1)) / n_cols
    pad = plan.px(8)
    pitch = int(round(st.body.size * 1.3))
    label_style = st.small.with_(color=st.label_color, bold=st.label_bold)
    outline = chance(rng, 0.7)
    title_kind = rng.choice(("bar", "plain", "square", "underline"))
    numbered = chance(rng, 0.3)
    colon = plan.colon if chance(rng, 0.3) else ""
    for number, (section, entries) in enumerate(body_groups(plan), 1):
        if plan.sectioned:
            y = draw_section_title(canvas, plan, st, section_title_text(section, number, rng, numbered), y, title_kind)
        rows: list[list[tuple[Entry, int]]] = [[]]
        used = 0
        for e in entries:
            value_w = canvas.width_of(list(e.value), st.body)
            span = 1
            while span < n_cols and value_w > span * box_w + gap * (span - 1) - 2 * pad:
                span += 1
            if e.wide:
                span = max(span, min(2, n_cols))
            if used + span > n_cols:
                rows.append([])
                used = 0
            rows[-1].append((e, span))
            used += span
        stretch = chance(rng, 0.6)
        for row in rows:
            if not row:
                continue
            spare = n_cols - sum(span for _, span in row)
            if stretch and spare > 0:
                row[-1] = (row[-1][0], row[-1][1] + spare)
            x = float(canvas.left)
            laid = []
            for e, span in row:
                w = span * box_w + gap * (span - 1)
                lines = canvas.wrap(list(e.value), st.body, w - 2 * pad)
                laid.append((e, x, w, lines))
                x += w + gap
            n_lines = max(len(lines) for *_, lines in laid)
            h = pad + int(label_style.size * 1.35) + n_lines * pitch + pad // 2
            if y + h > canvas.bottom:
                raise Overflow("boxes past page bottom")
            for e, bx, w, lines in laid:
                if outline:
                    canvas.rect(bx, y, bx + w, y + h, outline=st.rule, width=1)
                else:
                    canvas.rule(bx, y + h, bx + w - plan.px(6), y + h, st.rule, 1)
                canvas.text(bx + pad, y + pad, [Seg(e.label + colon, key=e.key)], label_style)
                ty = y + pad + int(label_style.size * 1.35) + (pitch - st.body.size) // 2
                for line in lines:
                    canvas.text(bx + pad, ty, line, st.body)
                    ty += pitch
            y += h + gap
        y += plan.px(rng.randint(6, 14))
    y = draw_notices(canvas, plan, st, y + plan.px(4))
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
