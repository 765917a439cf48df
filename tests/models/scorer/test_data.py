"""Novel wordings for training: the chosen fields' labels are replaced in place by strings no lexicon label occurs
in, one per label text; everything else on the page stays as it was."""
from __future__ import annotations

import random

import numpy as np

from models.scorer.data import Document, novel_pool, novel_wordings
from stages.contracts.types import TextLine
from stages.extraction.rules.lexicon import FULL_LEXICON


def _line(text: str, y: float) -> TextLine:
    poly = np.array([[0, y], [20 * len(text), y], [20 * len(text), y + 20], [0, y + 20]], np.float32)
    return TextLine(text, 0.9, poly, (0.9,) * len(text))


def test_labels_of_the_chosen_fields_get_novel_wordings_in_place() -> None:
    lines = [_line("投保人：张三", 0), _line("保险金额：50万元", 30), _line("保险费：1200元", 60),
             _line("被保险人：李四", 90), _line("保险金额", 120)]
    doc = Document("d", [lines], [(800.0, 1000.0)], {"sum_insured": "500000.00"})
    pool = novel_pool([doc])
    out = novel_wordings(doc, random.Random(0), ["sum_insured"], pool)
    new = [ln.text for ln in out.lines[0]]
    assert new[0] == "投保人：张三" and new[2] == "保险费：1200元" and new[3] == "被保险人：李四"
    assert new[1].endswith("：50万元") and len(new[1]) == len(lines[1].text)
    assert new[4] == new[1][:4]  # one novel string per label text
    assert FULL_LEXICON.pattern.search(new[1][:4]) is None
    assert all(ch in pool for ch in new[1][:4]) and not set(new[1][:4]) & set("投保被受益人")
    assert out.lines[0][1].char_probs == lines[1].char_probs
