"""Reading text lines: detected boxes of many pages -> perspective crops -> one recognition batch ->
:class:`TextLine` per readable box (empty or low-score reads dropped). N pages in -> N results out."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from typing import Callable, Hashable, Mapping, Optional, Sequence, Union

import numpy as np

from stages.contracts.types import Capture, Recognized, StageError, TextBox, TextLine
from stages.recognition.crop import crop_quad
from stages.recognition.recognizer import TextRecognizer

# Captures whose own recognizer (fine-tuned on that capture's lines) has its code-like lines read again by the main
# recognizer, that reading becoming the line's check reading (``TextLine.check_text``): the photo head reads the
# Latin letters of policy numbers worse than the main one (docs/decisions_review.md, "Codes on photos read twice").
CODES_CHECKED_ON: tuple[Capture, ...] = ("photo",)
# a code-like run: eight or more letters, digits and hyphens (a policy number, and the IDs, phones and dates that
# share a line with one)
CODE_LIKE = re.compile(r"[0-9A-Za-z][0-9A-Za-z\-]{7,}")


@dataclass(frozen=True)
class PageBoxes:
    """One page's image and its detected boxes; ``group`` keeps packed recognition rows within a document."""

    image: np.ndarray
    boxes: Sequence[TextBox]
    group: Hashable
    second_look: Optional[np.ndarray] = None  # same geometry as ``image``; each line is read from both
    capture: Capture = "scan"  # read by the reader's recognizer for this capture when it has one


class OnFirstUse:
    """A recognizer built the first time a page needs it (a fax or photo recognizer: most runs never see one, and
    each holds its own predictor). Thread-safe: concurrent first uses build it once."""

    def __init__(self, build: Callable[[], TextRecognizer]):
        self._build = build
        self._lock = threading.Lock()
        self._recognizer: Optional[TextRecognizer] = None

    @property
    def loaded(self) -> bool:
        return self._recognizer is not None

    def get(self) -> TextRecognizer:
        if self._recognizer is None:
            with self._lock:
                if self._recognizer is None:
                    self._recognizer = self._build()
        return self._recognizer


class LineReader:
    """``recognizer`` reads every page whose capture has no recognizer of its own in ``by_capture`` (built there or
    built on first use)."""

    def __init__(self, recognizer: TextRecognizer, drop_score: float,
                 by_capture: Optional[Mapping[Capture, Union[TextRecognizer, OnFirstUse]]] = None):
        self.recognizer = recognizer
        self.drop_score = drop_score
        self.by_capture = dict(by_capture or {})

    def read(self, pages: Sequence[PageBoxes]) -> list[list[TextLine] | StageError]:
        """The lines of each page, in box order; a page any of whose crops failed gets that error. A page with a
        second look has each line read from both renderings; the reading with the higher score is kept."""
        crops, owners, seconds = [], [], []
        for pi, page in enumerate(pages):
            for box in page.boxes:
                crop = crop_quad(page.image, box.polygon)
                crops.append(crop.image)
                owners.append((pi, box, crop.vertical))
                if page.second_look is not None:
                    seconds.append((len(owners) - 1, crop_quad(page.second_look, box.polygon).image))
        out: list[list[TextLine] | StageError] = [[] for _ in pages]
        if not crops:
            return out
        n = len(owners)
        read_from = [pages[pi] for pi, _, _ in owners] + [pages[owners[i][0]] for i, _ in seconds]
        results = self._recognize(crops + [c for _, c in seconds], read_from)
        results, extra = list(results[:n]), results[n:]
        for (i, _), res in zip(seconds, extra):
            first = results[i]
            if not isinstance(res, StageError) and not isinstance(first, StageError) and res.score > first.score:
                results[i] = res
        self._check_codes(results, crops, read_from[:n])
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

    def _check_codes(self, results: list[Recognized | StageError], crops: Sequence[np.ndarray],
                     owners: Sequence[PageBoxes]) -> None:
        """Lines of a capture in CODES_CHECKED_ON read by that capture's own recognizer and holding a code-like run
        are read again by the main recognizer; its reading becomes their check reading (in place)."""
        todo = [i for i, (res, page) in enumerate(zip(results, owners))
                if page.capture in CODES_CHECKED_ON and not isinstance(res, StageError) and res.check_text is None
                and self.reader_for(page.capture) is not self.recognizer and CODE_LIKE.search(res.text)]
        if not todo:
            return
        again = self.recognizer.recognize_batch([crops[i] for i in todo], groups=[owners[i].group for i in todo])
        for i, res in zip(todo, again):
            if not isinstance(res, StageError):
                results[i] = replace(results[i], check_text=res.text)

    def reader_for(self, capture: Capture) -> TextRecognizer:
        """The recognizer of pages of this capture (built now if it is built on first use)."""
        entry = self.by_capture.get(capture)
        if entry is None:
            return self.recognizer
        return entry.get() if isinstance(entry, OnFirstUse) else entry

    def _recognize(self, crops: list[np.ndarray], owners: list[PageBoxes]) -> list[Recognized | StageError]:
        """Each crop (of the page beside it) read by the recognizer of its page's capture when there is one, else by
        the main recognizer; N crops in, N results out, in order."""
        readers = [self.reader_for(p.capture) for p in owners]
        out: list[Recognized | StageError] = [StageError("recognize", "Internal", "not run")] * len(crops)
        for reader in {id(r): r for r in readers}.values():
            idx = [i for i, r in enumerate(readers) if r is reader]
            for i, res in zip(idx, reader.recognize_batch([crops[i] for i in idx], groups=[owners[i].group for i in idx])):
                out[i] = res
        return out


def to_text_line(res: Recognized, box: TextBox, vertical: bool) -> TextLine:
    n = max(res.num_frames, 1)
    char_u = tuple(min(1.0, (f + 0.5) / n) for f in res.char_frames)
    return TextLine(
        text=res.text, score=res.score, polygon=box.polygon, char_probs=res.char_probs,
        char_u=char_u, vertical=vertical, frame_probs=res.frame_probs, check_text=res.check_text,
    )
