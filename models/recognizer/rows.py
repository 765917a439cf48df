"""Training rows for fine-tuning a recognizer past a cut in its network: a page's line crops packed side by side as
the product's recognizer packs them (``stages.recognition.packing``), with the features at the cut of every row
computed once. The neck's attention sees a whole row, so it is trained on the rows it will read."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from stages.contracts.config import RecognitionConfig
from stages.recognition.crop import resize_to_bucket, resize_to_height, target_width
from stages.recognition.recognizer import CTC_STRIDE, PACK_GAP, PACK_WIDTH, WIDTH_BUCKETS
from stages.recognition.packing import Placement, frame_span, pack_rows


@dataclass(frozen=True)
class Member:
    """One line in a row: its frames ``[f0, f1)`` and its labels (dictionary indices, blank 0)."""

    f0: int
    f1: int
    labels: tuple[int, ...]


@dataclass(frozen=True)
class Row:
    features: np.ndarray  # channels x height x width (float16): the values at the cut for the row's pixels
    members: tuple[Member, ...]


def ctc_fits(labels: Sequence[int], frames: int) -> bool:
    """Whether a CTC path of ``frames`` frames can spell ``labels`` (a repeated label needs a blank between)."""
    repeats = sum(1 for a, b in zip(labels, labels[1:]) if a == b)
    return 0 < len(labels) and len(labels) + repeats <= frames


def page_images(crops: Sequence[np.ndarray], cfg: RecognitionConfig) -> list[tuple[np.ndarray, list[tuple[int, int, int]]]]:
    """A page's crops as recognizer inputs: rows of ``PACK_WIDTH`` holding several crops (``PACK_GAP`` apart) and,
    for a crop too wide to pack, a row of its own in its width bucket. Each row comes with its members as
    ``(crop index, first pixel, used width)``."""
    out: list[tuple[np.ndarray, list[tuple[int, int, int]]]] = []
    packed: list[tuple[int, np.ndarray]] = []
    for i, crop in enumerate(crops):
        if cfg.packing and target_width(crop, cfg.image_height) <= PACK_WIDTH:
            packed.append((i, resize_to_height(crop, cfg.image_height, PACK_WIDTH)))
        else:
            x, used, _ = resize_to_bucket(crop, cfg.image_height, WIDTH_BUCKETS)
            out.append((x, [(i, 0, used)]))
    if packed:
        placements, n_rows = pack_rows([x.shape[2] for _, x in packed], PACK_WIDTH, PACK_GAP, CTC_STRIDE)
        rows = [np.zeros((3, cfg.image_height, PACK_WIDTH), np.float32) for _ in range(n_rows)]
        members: list[list[tuple[int, int, int]]] = [[] for _ in range(n_rows)]
        for (i, x), p in zip(packed, placements):
            rows[p.row][:, :, p.offset:p.offset + p.width] = x
            members[p.row].append((i, p.offset, p.width))
        out.extend(zip(rows, members))
    return out


def backbone_rows(crops: Sequence[np.ndarray], labels: Sequence[Sequence[int]], cfg: RecognitionConfig,
                  predictor, batch: int = 4, progress: Optional[Callable[[int], object]] = None) -> list[Row]:
    """Rows of one page's crops (``labels`` beside them) with their features from ``predictor`` (the recognizer
    program cut where training starts; None keeps the row's pixels, for training from the image). Lines whose
    labels cannot fit their frames are left out."""
    images = page_images(crops, cfg)
    if predictor is not None:
        x_in = predictor.get_input_handle(predictor.get_input_names()[0])
        y_out = predictor.get_output_handle(predictor.get_output_names()[0])
    rows: list[Row] = []
    by_width: dict[int, list[int]] = {}
    for k, (img, _) in enumerate(images):
        by_width.setdefault(img.shape[2], []).append(k)
    for width, ks in by_width.items():
        for start in range(0, len(ks), batch):
            chunk = ks[start:start + batch]
            x = np.zeros((batch, 3, cfg.image_height, width), np.float32)  # one shape per width, as in the product
            for r, k in enumerate(chunk):
                x[r] = images[k][0]
            if predictor is None:
                feats = x
            else:
                x_in.copy_from_cpu(x)
                predictor.run()
                feats = y_out.copy_to_cpu()
            for r, k in enumerate(chunk):
                f = feats[r]
                kept = []
                for i, offset, used in images[k][1]:
                    f0, f1 = frame_span(Placement(i, 0, offset, used), CTC_STRIDE, width // CTC_STRIDE)
                    if ctc_fits(labels[i], f1 - f0):
                        kept.append(Member(f0, f1, tuple(labels[i])))
                if kept:
                    rows.append(Row(f.astype(np.float16), tuple(kept)))
            if progress is not None:
                progress(len(chunk))
    return rows
