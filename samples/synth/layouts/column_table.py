"""Column-header tables (held out of train/dev): each band is a row of shaded label cells with the
values in the row beneath, so a value sits *below* its label inside a grid."""
from __future__ import annotations

import random
from typing import Callable

from samples.synth.canvas import Canvas, Seg
from samples.synth.layouts.common import (
    body_groups, draw_footer, draw_header, draw_notices, draw_seal, draw_section_title, make_styles,
    section_title_text,
)
from samples.synth.layouts.tablekit import Cell, draw_row
from samples.synth.plan import DocPlan, Entry
from samples.synth.rand import chance


def _bands(entries: list[Entry], need: Callable[[Entry], float], max_cols: int, cw: float) -> list[list[Entry]]:
    """Consecutive entries grouped into bands that fit the width (at most ``max_cols`` each)."""
    bands: list[list[Entry]] = [[]]
    used = 0.0
    for e in entries:
        width = need(e)
        if bands[-1] and (len(bands[-1]) >= max_cols or used + width > cw):
            bands.append([])
            used = 0.0
        bands[-1].append(e)
        used += width
    return [b for b in bands if b]


def render(canvas: Canvas, plan: DocPlan, rng: random.Random) -> None:
    st = make_styles(plan, rng)
    y = draw_header(canvas, plan, st, rng) + plan.px(8)
    pad = plan.px(rng.randint(6, 10))
    cw = canvas.right - canvas.left
    max_cols = rng.choice((3, 4, 4, 5))
    head_style = st.small.with_(bold=True, color=st.label_color)
    head_fill = st.tint if chance(rng, 0.8) else None
    title_kind = rng.choice(("bar", "plain", "square", "underline"))
    numbered = chance(rng, 0.5)

    def need(e: Entry) -> float:
        value_w = min(canvas.width_of(list(e.value), st.body), cw * 0.6)
        return max(canvas.width_of(e.label, head_style), value_w) + 2 * pad + 4

    for number, (section, entries) in enumerate(body_groups(plan), 1):
        if plan.sectioned or chance(rng, 0.5):
            y = draw_section_title(canvas, plan, st, section_title_text(section, number, rng, numbered), y, title_kind)
        for band in _bands(entries, need, max_cols, cw):
            widths = [need(e) for e in band]
            scale = cw / sum(widths)
            xs = [float(canvas.left)]
            for w in widths:
                xs.append(xs[-1] + w * scale)
            xs[-1] = float(canvas.right)
            heads = [Cell(xs[k], xs[k + 1], (Seg(e.label, key=e.key),), head_style, "center", head_fill) for k, e in enumerate(band)]
            y = draw_row(canvas, heads, y, pad, st.rule)
            values = [Cell(xs[k], xs[k + 1], e.value, st.body, "center" if chance(rng, 0.5) else "left")
                      for k, e in enumerate(band)]
            y = draw_row(canvas, values, y, pad, st.rule)
        y += plan.px(rng.randint(10, 18))
    y = draw_notices(canvas, plan, st, y)
    _, seal_at = draw_footer(canvas, plan, st, rng, y + plan.px(6))
    if plan.seal:
        draw_seal(canvas, plan, rng, seal_at)
