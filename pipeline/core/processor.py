"""One worker's document processor: holds every stage's predictors (built once) and turns a batch of
sources into a batch of schema-v1 results. N sources in -> N results out, in order; a failure in one
document becomes that document's error record and never touches the others.

Dynamic batching lives here at the document level: the pages of all documents in a batch are detected
together, and all their text crops are recognized together in width buckets."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.contracts.result import build_result, error_result, page_json
from pipeline.core.sources import DecodeError, load_pages
from stages.detection.detector import TextDetector
from stages.normalize.mapback import fields_to_original, lines_to_original
from stages.normalize.page import PageNormalizer
from stages.recognition.crop import crop_quad
from stages.recognition.recognizer import TextRecognizer
from stages.contracts.types import Page, Recognized, StageError, TextBox, TextLine

log = logging.getLogger(__name__)

Source = Union[str, Path, bytes, np.ndarray]


def source_name(source: Source, index: int) -> str:
    if isinstance(source, (str, Path)):
        return str(source)
    if isinstance(source, bytes):
        return f"<bytes #{index}>"
    return f"<array #{index}>"


@dataclass
class _Doc:
    name: str
    pages: list[Page] = field(default_factory=list)
    error: Optional[StageError] = None
    boxes: list[list[TextBox]] = field(default_factory=list)
    lines: list[list[TextLine]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


class _StageFailure(Exception):
    def __init__(self, error: StageError):
        super().__init__(error.message)
        self.error = error


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


FieldStage = Callable[[list[list[TextLine]], list[Page]], tuple[dict, list[str], dict]]


class DocumentProcessor:
    """Everything one worker needs. Not thread-safe; one per worker."""

    def __init__(self, config: DocpipeConfig, field_keys: Sequence[str], field_stage: Optional[FieldStage] = None):
        self.config = config
        self.field_keys = tuple(field_keys)
        self.streams = _stage_streams(config)  # held here: a stream lives as long as its predictor
        ptr = {name: s.ptr for name, s in self.streams.items()}
        self.detector = TextDetector(config.detection, config.predictor, ptr.get("detect"))
        self.recognizer = TextRecognizer(config.recognition, config.predictor, ptr.get("recognize"))
        self.normalizer = PageNormalizer(config.normalize, config.recognition, config.predictor)
        # (lines per page, pages) -> (fields, review reasons); None until extraction is configured
        self.field_stage = field_stage

    # -- stages ------------------------------------------------------------------------------------
    def _decode(self, sources: Sequence[Source], names: Sequence[str]) -> list[_Doc]:
        docs = []
        for src, name in zip(sources, names):
            t0 = time.perf_counter()
            doc = _Doc(name=name)
            try:
                doc.pages = load_pages(src, self.config.input, name=name)
            except DecodeError as exc:
                doc.error = StageError("decode", exc.type, exc.message)
            except Exception as exc:  # never let one input stop the batch
                doc.error = StageError("decode", type(exc).__name__, f"{name}: {exc}")
            doc.timings["decode"] = _ms(t0)
            docs.append(doc)
        return docs

    def _detect(self, docs: list[_Doc]) -> None:
        live = [(d, p) for d in docs if d.error is None for p in d.pages]
        if not live:
            return
        # normalize page (photo outline, orientation) around detection; pages come back upright with transforms
        norm = self.normalizer.detect([p for _, p in live], self.detector.detect_batch)
        results = norm.boxes
        slots = [(d, i) for d in docs if d.error is None for i in range(len(d.pages))]
        for (doc, i), page in zip(slots, norm.pages):
            doc.pages[i] = page
        share = norm.detect_ms / len(live)
        for doc, _ in live:
            doc.timings["normalize"] = doc.timings.get("normalize", 0.0) + norm.normalize_ms / len(live)
        for (doc, _), res in zip(live, results):
            doc.timings["detect"] = doc.timings.get("detect", 0.0) + share
            if isinstance(res, StageError):
                doc.error = doc.error or res
                doc.boxes.append([])
            else:
                doc.boxes.append(res)

    def _recognize(self, docs: list[_Doc]) -> None:
        t0 = time.perf_counter()
        crops, owners = [], []
        for doc in docs:
            if doc.error is not None:
                continue
            doc.lines = [[] for _ in doc.pages]
            for pi, (page, boxes) in enumerate(zip(doc.pages, doc.boxes)):
                for box in boxes:
                    crop = crop_quad(page.image, box.polygon)
                    crops.append(crop.image)
                    owners.append((doc, pi, box, crop.vertical))
        if not crops:
            return
        results = self.recognizer.recognize_batch(crops, groups=[id(doc) for doc, _, _, _ in owners])
        total = _ms(t0)
        counts: dict[int, int] = {}
        drop = self.config.recognition.drop_score
        for (doc, pi, box, vertical), res in zip(owners, results):
            counts[id(doc)] = counts.get(id(doc), 0) + 1
            if isinstance(res, StageError):
                doc.error = doc.error or res
                continue
            if not res.text or res.score < drop:
                continue
            doc.lines[pi].append(_to_line(res, box, vertical))
        for doc in docs:
            if id(doc) in counts:
                doc.timings["recognize"] = total * counts[id(doc)] / len(crops)

    # -- entry point -------------------------------------------------------------------------------
    def process_batch(self, sources: Sequence[Source], names: Optional[Sequence[str]] = None) -> list[dict[str, Any]]:
        t_start = time.perf_counter()
        names = list(names) if names is not None else [source_name(s, i) for i, s in enumerate(sources)]
        docs = self._decode(sources, names)
        try:
            self._run_stages(docs)
        except _StageFailure as failure:
            if len(docs) == 1:
                docs[0].error = docs[0].error or failure.error
            else:
                # a whole-batch failure: run each document alone so only the one that breaks the stage fails
                log.warning("batch of %d failed in %s (%s); retrying one by one", len(docs), failure.error.stage,
                            failure.error.message)
                docs = self._decode(sources, names)
                for doc in docs:
                    try:
                        self._run_stages([doc])
                    except _StageFailure as single:
                        doc.error = doc.error or single.error
        total_ms = _ms(t_start)
        return [self._finish(doc, total_ms / max(len(docs), 1)) for doc in docs]

    def _run_stages(self, docs: list[_Doc]) -> None:
        for stage, step in (("detect", self._detect), ("recognize", self._recognize)):
            try:
                step(docs)
            except Exception as exc:
                log.exception("stage %s raised", stage)
                raise _StageFailure(StageError(stage, type(exc).__name__, str(exc))) from exc

    def _finish(self, doc: _Doc, total_share: float) -> dict[str, Any]:
        timings = dict(doc.timings)
        if doc.error is not None:
            timings["total"] = total_share
            return error_result(doc.name, doc.error, self.field_keys, timings)
        fields: dict = {k: None for k in self.field_keys}
        reasons: list[str] = []
        diagnostics: dict = {}
        if self.field_stage is not None:
            t0 = time.perf_counter()
            try:
                fields, reasons, diagnostics = self.field_stage(doc.lines, doc.pages)
            except Exception as exc:
                log.exception("extraction failed for %s", doc.name)
                err = StageError("extract", type(exc).__name__, str(exc))
                return error_result(doc.name, err, self.field_keys, timings)
            timings["extract"] = _ms(t0)
        else:
            reasons = ["no_extraction_stage"]
        timings["total"] = total_share + timings.get("extract", 0.0)
        inc = self.config.output.include_chars
        fields = fields_to_original(fields, doc.pages)  # extraction ran upright; results are in given pixels
        pages = [page_json(p, lines_to_original(p, lines), inc) for p, lines in zip(doc.pages, doc.lines)]
        extra = {"diagnostics": diagnostics} if self.config.output.diagnostics else None
        return build_result(doc.name, pages, fields, [], timings, review_reasons=reasons, extra=extra)


def _stage_streams(config: DocpipeConfig) -> dict[str, Any]:
    """On a CUDA build of Paddle with a device: one CUDA stream per model stage (their raw pointers go to
    ``Config.set_exec_stream``); empty on CPU, where the stream APIs must not be touched."""
    if config.predictor.device != "gpu":
        return {}
    from pipeline.core.gpu import StageStream, cuda_ready, paddle_cuda_ready

    if not (paddle_cuda_ready() and cuda_ready()):
        return {}
    return {name: StageStream.create(name) for name in ("detect", "recognize", "extract")}


def _to_line(res: Recognized, box: TextBox, vertical: bool) -> TextLine:
    n = max(res.num_frames, 1)
    char_u = tuple(min(1.0, (f + 0.5) / n) for f in res.char_frames)
    return TextLine(
        text=res.text, score=res.score, polygon=box.polygon, char_probs=res.char_probs,
        char_u=char_u, vertical=vertical, frame_probs=res.frame_probs,
    )


def _field_keys() -> tuple[str, ...]:
    from stages.extraction.fields import FIELDS

    return tuple(FIELDS)


FIELD_KEYS: tuple[str, ...] = _field_keys()


def build_processor(config: DocpipeConfig) -> DocumentProcessor:
    """A worker's processor with every stage the configuration asks for, predictors built once."""
    from stages.extraction.fields import FIELDS
    from stages.extraction.page_roles import RoleAwareFields
    from stages.extraction.stage import ExtractionStage

    processor = DocumentProcessor(config, FIELD_KEYS)
    # field alphabets: their CTC probabilities are always kept with each line for constrained re-decoding
    processor.recognizer.set_always_keep("".join(s.charset for s in FIELDS.values() if s.charset))
    # a multi-page bundle's letter and terms pages never supply a field (stages/extraction/page_roles.py)
    processor.field_stage = RoleAwareFields(ExtractionStage(config, processor.recognizer.chars))
    return processor
