"""The normalize-page step of the flow: photographed sheets rectified and leader dots erased before detection,
pages turned upright after a first detection (re-detected when turned). N pages in -> N pages (with transforms)
and N detections."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Sequence

from stages.contracts.config import PageConfig, PredictorConfig, RecognitionConfig
from stages.contracts.types import Page, StageError, TextBox
from stages.page.boundary import normalize_boundary
from stages.page.fax import normalize_fax
from stages.page.leaders import erase_leaders
from stages.page.orientation import Detect, PageOrienter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Normalized:
    pages: list[Page]
    boxes: list[list[TextBox] | StageError]
    normalize_ms: float  # boundary + orientation checks + re-detection of turned pages
    detect_ms: float  # the first detection of every page


def normalize_capture(page: Page, cfg: PageConfig) -> Page:
    """A photographed sheet rectified (capture "photo"), a binarised page resampled ("fax"), else as given; then
    its leader dots painted over."""
    if cfg.boundary:
        page = normalize_boundary(page, cfg)
    page = normalize_fax(page, cfg)
    return erase_leaders(page) if cfg.erase_leaders else page


class PageNormalizer:
    def __init__(self, cfg: PageConfig, rec_cfg: RecognitionConfig, predictor_cfg: PredictorConfig):
        self.cfg = cfg
        self.orienter = PageOrienter(cfg, rec_cfg, predictor_cfg) if cfg.orientation else None

    def before_detection(self, pages: Sequence[Page]) -> list[Page]:
        """Photographed sheets rectified, binarised pages resampled; other pages as given."""
        out = []
        for page in pages:
            try:
                page = normalize_capture(page, self.cfg)
            except Exception as exc:  # per page: a failed step leaves the page as it was
                log.warning("page normalization failed on page %d: %s", page.index, exc)
            out.append(page)
        return out

    def detect(self, pages: Sequence[Page], detect: Detect) -> Normalized:
        t0 = time.perf_counter()
        pages = self.before_detection(pages)
        t1 = time.perf_counter()
        boxes = detect([p.image for p in pages])
        t2 = time.perf_counter()
        if self.orienter is not None:
            pages, boxes = self.orienter.orient(pages, boxes, detect)
        t3 = time.perf_counter()
        return Normalized(list(pages), list(boxes), ((t1 - t0) + (t3 - t2)) * 1000.0, (t2 - t1) * 1000.0)
