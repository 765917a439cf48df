"""Text of no policy: lines of the commonest Chinese characters drawn at random, to measure how a recognizer reads
characters outside the generator's vocabulary (scripts/capture_forgetting.py, the capture recognizer tests)."""
from __future__ import annotations

import random

# GB2312 level 1: the 3,755 commonest characters
LEVEL1 = tuple(bytes([hi, lo]).decode("gb2312") for hi in range(0xB0, 0xD8) for lo in range(0xA1, 0xFF)
               if not (hi == 0xD7 and lo > 0xF9))
_OTHER = tuple("0123456789") * 6 + tuple("：，。、（）-/.") * 2


def common_character_lines(rng: random.Random, n: int = 14) -> list[str]:
    """``n`` lines of 8-16 characters, four in five a level-1 character, the rest digits and punctuation."""
    return ["".join(rng.choice(LEVEL1) if rng.random() < 0.8 else rng.choice(_OTHER)
                    for _ in range(rng.randint(8, 16))) for _ in range(n)]
