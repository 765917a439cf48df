"""Reading text lines: detected boxes of many pages -> perspective crops -> one recognition batch ->
:class:`TextLine` per readable box (empty or low-score reads dropped). N pages in -> N results out."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from stages.contracts.types import Recognized, StageError, TextBox, TextLine
from stages.recognition.crop import crop_quad
from stages.recognition.recognizer import TextRecognizer


@dataclass(frozen=True)
class PageBoxes:
    """One page's image and its detected boxes; ``group`` keeps packed recognition rows within a document."""

    image: np.ndarray
    boxes: Sequence[TextBox]
    group: Hashable


class LineReader:
    def __init__(self, recognizer: TextRecognizer, drop_score: float):
        self.recognizer = recognizer
        self.drop_score = drop_score

    def read(self, pages: Sequence[PageBoxes]) -> list[list[TextLine] | StageError]:
        """The lines of each page, in box order; a page any of whose crops failed gets that error."""
        crops, owners = [], []
        for pi, page in enumerate(pages):
            for box in page.boxes:
                crop = crop_quad(page.image, box.polygon)
                crops.append(crop.image)
                owners.append((pi, box, crop.vertical))
        out: list[list[TextLine] | StageError] = [[] for _ in pages]
        if not crops:
            return out
        results = self.recognizer.recognize_batch(crops, groups=[pages[pi].group for pi, _, _ in owners])
        for (pi, box, vertical), res in zip(owners, results):
            lines = out[pi]
            if isinstance(res, StageError):
                if not isinstance(lines, StageError):
                    out[pi] = res
                continue
            if isinstance(lines, StageError) or not res.text or res.score < self.drop_score:
                continue
            lines.append(to_text_line(res, box, vertical))
        return out


def to_text_line(res: Recognized, box: TextBox, vertical: bool) -> TextLine:
    n = max(res.num_frames, 1)
    char_u = tuple(min(1.0, (f + 0.5) / n) for f in res.char_frames)
    return TextLine(
        text=res.text, score=res.score, polygon=box.polygon, char_probs=res.char_probs,
        char_u=char_u, vertical=vertical, frame_probs=res.frame_probs,
    )
