"""Lines of common characters drawn at random (samples/synth/common_text.py): the 3,755 GB2312 level-1 characters,
lines of 8-16 characters of them, digits and punctuation, the same lines for the same seed."""
from __future__ import annotations

import random

from samples.synth.common_text import LEVEL1, common_character_lines


def test_level_one_holds_the_3755_commonest_characters_once_each() -> None:
    assert len(LEVEL1) == len(set(LEVEL1)) == 3755
    assert LEVEL1[0] == "啊" and LEVEL1[-1] == "座"


def test_lines_are_drawn_from_level_one_digits_and_punctuation_the_same_for_a_seed() -> None:
    lines = common_character_lines(random.Random(7), n=30)
    text = "".join(lines)
    assert len(lines) == 30 and all(8 <= len(line) <= 16 for line in lines)
    assert set(text) <= set(LEVEL1) | set("0123456789：，。、（）-/.")
    assert sum(c in set(LEVEL1) for c in text) > 0.7 * len(text)
    assert common_character_lines(random.Random(7), n=30) == lines != common_character_lines(random.Random(8), n=30)
