"""Layout families: each module has ``render(canvas, plan, rng)`` drawing one page."""
from __future__ import annotations

import random
from typing import Callable

from samples.synth.canvas import Canvas
from samples.synth.layouts import (
    column_table, dotted_leaders, fs_ledger, kv_lines, label_above, narrative, ruled_table, two_column, underline_form,
)
from samples.synth.plan import DocPlan

Renderer = Callable[[Canvas, DocPlan, random.Random], None]

RENDERERS: dict[str, Renderer] = {
    "ruled_table": ruled_table.render,
    "kv_lines": kv_lines.render,
    "label_above": label_above.render,
    "dotted_leaders": dotted_leaders.render,
    "narrative": narrative.render,
    "two_column": two_column.render,
    "column_table": column_table.render,
    "underline_form": underline_form.render,
}
# few-shot families (samples.synth.few_shot), drawn only when asked for
RENDERERS["fs_ledger"] = fs_ledger.render
RENDERERS["fs_grid"] = ruled_table.render
RENDERERS["fs_boxes"] = label_above.render
RENDERERS["fs_columns"] = column_table.render
RENDERERS["fs_pairs"] = two_column.render
RENDERERS["fs_bands"] = column_table.render
