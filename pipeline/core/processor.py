"""One worker's document processor: every stage built once in its constructor, and one method,
:meth:`DocumentProcessor.process_batch`, that reads as the flow: decode -> normalize page + detect ->
recognize -> extract -> assemble. N sources in -> N results out, in order; a failure in one document becomes
that document's error record and never touches the others.

Dynamic batching lives here at the document level: the pages of all documents in a batch are detected
together, and all their text lines are recognized together."""
from __future__ import annotations

import functools
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional, Sequence

from pipeline.core.gpu import stage_streams
from pipeline.core.sources import DecodeError, load_pages
from stages.contracts.config import DocpipeConfig, PredictorConfig, RecognitionConfig
from stages.contracts.registry import resolve_model
from stages.contracts.result import build_result, error_result, page_json
from stages.contracts.types import Capture, Page, Source, StageError, TextBox, TextLine, source_name
from stages.detection.detector import TextDetector
from stages.page.mapback import fields_to_original, lines_to_original
from stages.page.stage import PageNormalizer
from stages.extraction.field_specs import FIELD_CHARSET
from stages.extraction.page_roles import RoleAwareFields
from stages.extraction.rules.lexicon import LabelWithholding
from stages.extraction.stage import DocumentFields, ExtractionStage
from stages.recognition.ctc import CharDict
from stages.recognition.lines import LineReader, OnFirstUse, PageBoxes
from stages.recognition.recognizer import TextRecognizer

log = logging.getLogger(__name__)


@dataclass
class DocumentState:
    """One document on its way through the flow; ``error`` stops it at the stage that set it."""

    name: str
    pages: list[Page] = field(default_factory=list)
    boxes: list[list[TextBox]] = field(default_factory=list)
    lines: list[list[TextLine]] = field(default_factory=list)
    extraction: Optional[DocumentFields] = None
    error: Optional[StageError] = None
    timings: dict[str, float] = field(default_factory=dict)


class _StageFailure(Exception):
    """A stage raised for the whole batch (not for one item)."""

    def __init__(self, error: StageError):
        super().__init__(error.message)
        self.error = error


class DocumentProcessor:
    """Everything one worker needs. Not thread-safe; one per worker. ``withhold`` is for measurements only."""

    def __init__(self, config: DocpipeConfig, withhold: Optional[LabelWithholding] = None):
        self.config = config
        self.streams = stage_streams(config, ("detect", "recognize"))  # held as long as the predictors
        ptr = {name: s.ptr for name, s in self.streams.items()}
        self.detector = TextDetector(config.detection, config.predictor, ptr.get("detect"))
        # photo outline + orientation around detection (stages/page/); pages carry their transforms
        self.normalizer = PageNormalizer(config.page, config.recognition, config.predictor)
        self.recognizer = TextRecognizer(config.recognition, config.predictor, ptr.get("recognize"))
        # field alphabets: their CTC probabilities are always kept with each line for constrained re-decoding
        self.recognizer.set_always_keep(FIELD_CHARSET)
        self.reader = LineReader(self.recognizer, config.recognition.drop_score,
                                 self._capture_recognizers(ptr.get("recognize")))
        # beside a schedule page, a bundle's letter and terms pages never supply a field
        self.extractor = RoleAwareFields(ExtractionStage(config, self.recognizer.chars, withhold))

    def _capture_recognizers(self, stream: Optional[int]) -> dict[Capture, OnFirstUse]:
        """The configured recognizers of faxes and photos, each loaded the first time a page of its capture arrives
        (a run of clean scans never loads them). Their files and dictionaries (the main model's) are checked now."""
        rc = self.config.recognition
        out: dict[Capture, OnFirstUse] = {}
        for capture, key, model_dir in (("fax", rc.fax_model, rc.fax_model_dir), ("photo", rc.photo_model, rc.photo_model_dir)):
            if key is None:
                continue
            model = resolve_model(key, "rec", model_dir)
            if CharDict.from_chars(model.characters or "", use_space_char=True) != self.recognizer.chars:
                raise ValueError(f"recognition.{capture}_model {key!r} must share the main model's dictionary")
            cfg = rc.model_copy(update={"model": key, "model_dir": model_dir, "dict_path": None})
            out[capture] = OnFirstUse(functools.partial(_capture_recognizer, cfg, self.config.predictor, stream))
        return out

    def process_batch(self, sources: Sequence[Source], names: Optional[Sequence[str]] = None) -> list[dict[str, Any]]:
        """The flow. Detection and recognition run on the whole batch; if one of them raises for the batch,
        each document is run alone so that only the one that breaks the stage fails."""
        t_start = time.perf_counter()
        names = list(names) if names is not None else [source_name(s, i) for i, s in enumerate(sources)]
        docs = self.decode(sources, names)
        try:
            self.read_text(docs)
        except _StageFailure as failure:
            docs = self._read_text_one_by_one(sources, names, failure)
        self.extract(docs)
        share = _ms(t_start) / max(len(docs), 1)
        return [self.assemble(doc, share) for doc in docs]

    # -- the stages, in flow order ---------------------------------------------------------------------
    def decode(self, sources: Sequence[Source], names: Sequence[str]) -> list[DocumentState]:
        docs = []
        for src, name in zip(sources, names):
            t0 = time.perf_counter()
            doc = DocumentState(name=name)
            try:
                doc.pages = load_pages(src, self.config.input, name=name)
            except DecodeError as exc:
                doc.error = exc.as_stage_error()
            except Exception as exc:  # never let one input stop the batch
                doc.error = StageError("decode", type(exc).__name__, f"{name}: {exc}")
            doc.timings["decode"] = _ms(t0)
            docs.append(doc)
        return docs

    def read_text(self, docs: list[DocumentState]) -> None:
        with _stage("detect"):
            self.detect(docs)
        with _stage("recognize"):
            self.recognize(docs)

    def detect(self, docs: list[DocumentState]) -> None:
        live = [(d, p) for d in docs if d.error is None for p in d.pages]
        if not live:
            return
        norm = self.normalizer.detect([p for _, p in live], self.detector.detect_batch)
        pages = iter(norm.pages)
        for doc in docs:
            if doc.error is None:
                doc.pages = [next(pages) for _ in doc.pages]  # upright (maybe rectified) pages, detected as such
        results = norm.boxes
        share, norm_share = norm.detect_ms / len(live), norm.normalize_ms / len(live)
        for (doc, _), res in zip(live, results):
            doc.timings["normalize"] = doc.timings.get("normalize", 0.0) + norm_share
            doc.timings["detect"] = doc.timings.get("detect", 0.0) + share
            if isinstance(res, StageError):
                doc.error = doc.error or res
                doc.boxes.append([])
            else:
                doc.boxes.append(res)

    def recognize(self, docs: list[DocumentState]) -> None:
        live = [d for d in docs if d.error is None]
        pages = [PageBoxes(p.image, boxes, id(d), p.second_look, p.capture) for d in live for p, boxes in zip(d.pages, d.boxes)]
        if not any(p.boxes for p in pages):
            for doc in live:
                doc.lines = [[] for _ in doc.pages]
            return
        t0 = time.perf_counter()
        results = iter(self.reader.read(pages))
        total, n_boxes = _ms(t0), sum(len(p.boxes) for p in pages)
        for doc in live:
            doc.lines = []
            for page_result in (next(results) for _ in doc.pages):
                if isinstance(page_result, StageError):
                    doc.error = doc.error or page_result
                    page_result = []
                doc.lines.append(page_result)
            doc_boxes = sum(len(b) for b in doc.boxes)
            if doc_boxes:
                doc.timings["recognize"] = total * doc_boxes / n_boxes

    def extract(self, docs: list[DocumentState]) -> None:
        for doc in docs:
            if doc.error is not None:
                continue
            t0 = time.perf_counter()
            try:
                doc.extraction = self.extractor(doc.lines, doc.pages)
            except Exception as exc:  # one document's extraction failure is that document's error
                log.exception("extraction failed for document %d of the batch", docs.index(doc))
                doc.error = StageError("extract", type(exc).__name__, str(exc))
            doc.timings["extract"] = _ms(t0)

    def assemble(self, doc: DocumentState, total_share: float) -> dict[str, Any]:
        timings = dict(doc.timings)
        timings["total"] = total_share
        if doc.error is not None or doc.extraction is None:
            error = doc.error or StageError("extract", "Internal", "no extraction result")
            return error_result(doc.name, error, timings)
        inc = self.config.output.include_chars
        # extraction ran on the normalized pages; every polygon goes back to the pixels of the image given
        pages = [page_json(p, lines_to_original(p, lines), inc) for p, lines in zip(doc.pages, doc.lines)]
        ex = doc.extraction
        fields = fields_to_original(ex.fields, doc.pages)
        extra = {"diagnostics": ex.diagnostics} if self.config.output.diagnostics else None
        return build_result(doc.name, pages, fields, [], timings, review_reasons=ex.review_reasons, extra=extra)

    # -- whole-batch failure ----------------------------------------------------------------------------
    def _read_text_one_by_one(self, sources: Sequence[Source], names: Sequence[str],
                              failure: _StageFailure) -> list[DocumentState]:
        docs = self.decode(sources, names)
        if len(docs) == 1:
            docs[0].error = docs[0].error or failure.error
            return docs
        log.warning("batch of %d failed in %s (%s); retrying one by one", len(docs), failure.error.stage,
                    failure.error.message)
        for doc in docs:
            try:
                self.read_text([doc])
            except _StageFailure as single:
                doc.error = doc.error or single.error
        return docs


def _capture_recognizer(cfg: RecognitionConfig, predictor: PredictorConfig, stream: Optional[int]) -> TextRecognizer:
    log.info("loading the %s recognizer on its first page", cfg.model)
    rec = TextRecognizer(cfg, predictor, stream)
    rec.set_always_keep(FIELD_CHARSET)
    return rec


@contextmanager
def _stage(name: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        log.exception("stage %s raised", name)
        raise _StageFailure(StageError(name, type(exc).__name__, str(exc))) from exc


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0
