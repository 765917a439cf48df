"""Shared fixtures. Heavy objects (engines, predictors) are built once per session."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "pages"
_FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
)


def cjk_font(size: int = 28):
    from PIL import ImageFont

    for path in _FONT_CANDIDATES:
        if Path(path).is_file():
            return ImageFont.truetype(path, size, index=2 if "Noto" in path else 0)
    pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")


def text_image(lines: list[str], width: int = 640, line_h: int = 56, size: int = 28) -> np.ndarray:
    """A white BGR page with the given lines drawn in black."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (width, 40 + line_h * len(lines)), "white")
    draw = ImageDraw.Draw(img)
    font = cjk_font(size)
    for i, line in enumerate(lines):
        draw.text((24, 20 + i * line_h), line, font=font, fill="black")
    return np.ascontiguousarray(np.asarray(img)[:, :, ::-1])


@pytest.fixture(scope="session")
def inline_engine():
    from stages.contracts.config import DocpipeConfig, with_overrides
    from pipeline.core.engine import Engine

    cfg = DocpipeConfig()
    cfg = with_overrides(cfg, engine={"mode": "inline"})
    with Engine(cfg) as eng:
        yield eng
