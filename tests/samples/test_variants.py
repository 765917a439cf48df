"""Real-world variants of the synthetic corpus: geometry follows the pixels, the variant is recorded, held-out
parameters appear only in ``test``, and a 3-page bundle decodes with the schedule where the truth says."""
from __future__ import annotations

import json
import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from samples.synth import generate_document
from samples.synth.corpus import iter_write
from samples.synth.variants import HELD_OUT_PHOTO_BACKGROUNDS, fax, photo, rotated

LONG_SIDE = 640


@pytest.fixture(scope="module")
def page():
    return generate_document(9, "dev", 4, LONG_SIDE)


def _ink_under(image: np.ndarray, truth: dict) -> float:
    """Mean darkness under the ground-truth character boxes (text is there when the geometry is right)."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    vals = []
    for ln in truth["lines"]:
        for x0, y0, x1, y1 in ln["char_boxes"]:
            patch = gray[int(y0):int(np.ceil(y1)) + 1, int(x0):int(np.ceil(x1)) + 1]
            if patch.size:
                vals.append(255.0 - patch.min())
    return float(np.mean(vals))


def test_rotated_truth_follows_the_pixels(page) -> None:
    image, truth = page
    for seed in range(6):
        out, t = rotated(image, truth, random.Random(seed))
        turn = t["variant_params"]["turn"]
        assert t["variant"] == f"rotated{turn}" and (t["height"], t["width"]) == out.shape[:2]
        assert np.array_equal(np.rot90(out, k=turn // 90), image)  # turning it back gives the page
        assert _ink_under(out, t) == pytest.approx(_ink_under(image, truth), abs=1.0)


def test_fax_and_photo_truth_follow_the_pixels(page) -> None:
    image, truth = page
    base = _ink_under(image, truth)
    out, t = fax(image, truth, random.Random(1), "dev")
    assert t["variant"] == "fax" and set(np.unique(out)) <= {0, 255} and (t["height"], t["width"]) == out.shape[:2]
    assert _ink_under(out, t) > 0.6 * base
    out, t = photo(image, truth, random.Random(2), "dev")
    assert t["variant"] == "photo" and (t["height"], t["width"]) == out.shape[:2]
    assert _ink_under(out, t) > 0.6 * base
    corners = np.array(t["variant_params"]["page_corners"])
    assert corners.min() > 0 and (corners.max(axis=0) < [out.shape[1], out.shape[0]]).all()


def test_held_out_parameters_only_in_test(page) -> None:
    image, truth = page
    for seed in range(12):
        assert not fax(image, truth, random.Random(seed), "dev")[1]["variant_params"]["held_out"]
        p = photo(image, truth, random.Random(seed), "train")[1]["variant_params"]
        assert not p["held_out"] and p["background"] not in HELD_OUT_PHOTO_BACKGROUNDS
    assert any(fax(image, truth, random.Random(s), "test")[1]["variant_params"]["held_out"] for s in range(12))


def test_corpus_with_variants_records_them_and_bundles_decode(tmp_path: Path) -> None:
    from pipeline.core.sources import load_pages
    from stages.contracts.config import InputConfig

    written = list(iter_write(tmp_path, 10, 4, "test", workers=1, long_side=LONG_SIDE,
                              variants=("rotated", "fax", "photo", "multipage")))
    assert len(written) == 10
    seen = set()
    for gt in sorted(tmp_path.glob("*.json")):
        truth = json.loads(gt.read_text(encoding="utf-8"))
        seen.add(truth["variant"].rstrip("0123456789"))
        pages = load_pages(str(tmp_path / truth["image"]), InputConfig())
        k = truth.get("schedule_page", 0)
        assert len(pages) == (3 if truth["variant"] == "multipage" else 1)
        # a PDF page is rendered back at the dpi it was written with: its size within a pixel of rounding
        assert abs(pages[k].height - truth["height"]) <= 1 and abs(pages[k].width - truth["width"]) <= 1
        if truth["variant"] == "multipage":
            assert truth["page_roles"][k] == "schedule" and sorted(truth["page_roles"]) == ["letter", "schedule", "terms"]
    assert seen == {"rotated", "fax", "photo", "multipage"}
