"""Writing a corpus: ``{split}_{i:05d}.jpg`` + ``.json`` per document, in parallel processes.

Each document depends only on (seed, split, index), so the output is identical for any number of
workers.
"""
from __future__ import annotations

import json
import logging
import multiprocessing as mp
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import cv2
import numpy as np

from samples.synth.document import file_stem, generate_document
from samples.synth.plan import REFERENCE_LONG_SIDE
from samples.synth.rand import py_rng

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    out_dir: str
    seed: int
    split: str
    index: int
    long_side: int
    jpeg_quality: int | None  # overrides the document's own quality when set
    variants: tuple[str, ...] | None = None  # real-world variants drawn per document (samples.synth.variants)
    family: str | None = None  # forced layout family (a few-shot family: samples.synth.few_shot)
    wordings: tuple[tuple[str, tuple[str, ...]], ...] = ()  # withheld wordings per field (samples.synth.wordings)
    fonts: tuple[str, ...] = ()  # dev-only faces drawn per document (samples.synth.fonts.DEV_ONLY_FACES)


@dataclass(frozen=True)
class Written:
    index: int
    layout: str
    font: str
    image_bytes: int
    variant: str = "scan"


def encode(image: np.ndarray, quality: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()


def truth_json(truth: dict[str, Any]) -> str:
    return json.dumps(truth, ensure_ascii=False, separators=(",", ":"))


def write_document(job: Job) -> Written:
    image, truth = generate_document(job.seed, job.split, job.index, job.long_side, job.family,
                                     dict(job.wordings) or None, job.fonts)
    if job.jpeg_quality is not None:
        old = truth["jpeg_quality"]
        truth["jpeg_quality"] = job.jpeg_quality
        truth["degradations"] = [d if d != f"jpeg:{old}" else f"jpeg:{job.jpeg_quality}" for d in truth["degradations"]]
    suffix = ".jpg"
    if job.variants is None:
        data = encode(image, truth["jpeg_quality"])
    else:
        data, suffix, truth = apply_variant(image, truth, job)
    stem = Path(job.out_dir) / file_stem(job.split, job.index)
    stem.with_suffix(suffix).write_bytes(data)
    stem.with_suffix(".json").write_text(truth_json(truth) + "\n", encoding="utf-8")
    return Written(job.index, truth["layout"], truth["font"], len(data), truth.get("variant", "scan"))


def apply_variant(image: np.ndarray, truth: dict[str, Any], job: Job) -> tuple[bytes, str, dict[str, Any]]:
    """Draw the document's variant from ``job.variants`` and encode it: (file bytes, suffix, ground truth)."""
    from samples.synth import multipage, variants

    assert job.variants is not None
    name = variants.choose_variant(py_rng(job.seed, job.split, job.index, "variant"), job.variants)
    rng = py_rng(job.seed, job.split, job.index, "variant", name)
    stem = file_stem(job.split, job.index)
    if name == "multipage":
        data, truth = multipage.bundle(image, truth, rng, job.split)
        return data, ".pdf", {**truth, "image": stem + ".pdf"}
    if name == "rotated":
        image, truth = variants.rotated(image, truth, rng)
    elif name == "fax":
        image, truth = variants.fax(image, truth, rng, job.split)
        ok, buf = cv2.imencode(".png", image[:, :, 0])
        if not ok:
            raise RuntimeError("PNG encoding failed")
        return buf.tobytes(), ".png", {**truth, "image": stem + ".png"}
    elif name == "photo":
        image, truth = variants.photo(image, truth, rng, job.split)
    else:
        truth = {**truth, "variant": "scan"}
    return encode(image, truth["jpeg_quality"]), ".jpg", truth


def _init_worker() -> None:
    cv2.setNumThreads(1)


def iter_write(out_dir: str | os.PathLike[str], n: int, seed: int, split: str, workers: int | None = None,
               long_side: int = REFERENCE_LONG_SIDE, start: int = 0,
               jpeg_quality: int | None = None, indices: list[int] | None = None,
               variants: tuple[str, ...] | None = None,
               layouts: tuple[str, ...] | None = None,
               wordings: Mapping[str, Sequence[str]] | None = None,
               fonts: Sequence[str] = ()) -> Iterator[Written]:
    """Write documents and yield one :class:`Written` per document as it finishes (any order). With
    ``variants``, each document is one of them (drawn from its identity) and records it as ``variant``; with
    ``layouts``, document ``i`` is of layout family ``layouts[i % len(layouts)]``; with ``wordings`` (dev only),
    some field labels are printed in withheld wordings (:mod:`samples.synth.wordings`); with ``fonts`` (dev only),
    each document is printed in one of these dev-only faces (:data:`samples.synth.fonts.DEV_ONLY_FACES`)."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    wanted = indices if indices is not None else list(range(start, start + n))
    frozen = tuple((k, tuple(v)) for k, v in (wordings or {}).items())
    jobs = [Job(str(out_dir), seed, split, i, long_side, jpeg_quality, variants,
                layouts[i % len(layouts)] if layouts else None, frozen, tuple(fonts)) for i in wanted]
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    if workers == 1:
        _init_worker()
        for job in jobs:
            yield write_document(job)
        return
    # spawn: workers start clean (no inherited threads or predictor state from a host process)
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init_worker) as pool:
        yield from pool.imap_unordered(write_document, jobs, chunksize=max(1, min(8, len(jobs) // (workers * 8) or 1)))


def write_corpus(out_dir: str | os.PathLike[str], n: int, seed: int, split: str, workers: int | None = None,
                 long_side: int = REFERENCE_LONG_SIDE) -> list[Written]:
    """Write documents ``0..n-1`` of ``split``; returns their summaries in index order."""
    done = sorted(iter_write(out_dir, n, seed, split, workers, long_side), key=lambda w: w.index)
    log.info("wrote %d %s documents to %s", len(done), split, out_dir)
    return done
