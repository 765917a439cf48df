"""One worker's document processor: every stage built once in its constructor, and one method,
:meth:`DocumentProcessor.process_batch`, that reads as the flow: decode -> normalize page + detect ->
recognize -> extract -> assemble. N sources in -> N results out, in order; a failure in one document becomes
that document's error record and never touches the others.

Dynamic batching lives here at the document level: the pages of all documents in a batch are detected
together, and all their text lines are recognized together, in groups of at most ``input.max_pixels_per_page``
pixels; pages are decoded one group at a time and keep only their geometry once read, so memory is bounded by
a group, not by the documents' page count."""
from __future__ import annotations

import functools
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from pipeline.core.gpu import stage_streams
from pipeline.core.sources import DecodeError, PageStream, open_pages
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
    stream: Optional[PageStream] = None  # the opened input while its pages are being read


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
        """The flow. Pages are decoded as they are read: the pages of the batch go through detection and
        recognition in groups of at most ``input.max_pixels_per_page`` pixels (one page at least), and each
        page's pixels are dropped once it is read, so a long document costs about a page of memory. If a group
        raises for all its pages, each document in it is run alone so that only the one that breaks the stage
        fails."""
        t_start = time.perf_counter()
        names = list(names) if names is not None else [source_name(s, i) for i, s in enumerate(sources)]
        docs = self.read(sources, names)
        self.extract(docs)
        share = _ms(t_start) / max(len(docs), 1)
        return [self.assemble(doc, share) for doc in docs]

    def read(self, sources: Sequence[Source], names: Sequence[str]) -> list[DocumentState]:
        """Open, decode, detect and recognize the documents, page group by page group (no extraction)."""
        docs = self.open(sources, names)
        try:
            for group in self._page_groups(docs):
                self._read_group(group)
        finally:
            for doc in docs:
                if doc.stream is not None:
                    doc.stream.close()
                    doc.stream = None
        return docs

    # -- the stages, in flow order ---------------------------------------------------------------------
    def open(self, sources: Sequence[Source], names: Sequence[str]) -> list[DocumentState]:
        """Each document opened (limits checked from its headers); no page is decoded yet."""
        docs = []
        for src, name in zip(sources, names):
            t0 = time.perf_counter()
            doc = DocumentState(name=name)
            try:
                doc.stream = open_pages(src, self.config.input, name=name)
            except DecodeError as exc:
                doc.error = exc.as_stage_error()
            except Exception as exc:  # never let one input stop the batch
                doc.error = StageError("decode", type(exc).__name__, f"{name}: {exc}")
            doc.timings["decode"] = _ms(t0)
            docs.append(doc)
        return docs

    def _page_groups(self, docs: list[DocumentState]) -> Iterator[list[tuple[DocumentState, int]]]:
        """(document, page index) in batch order, cut into groups of at most ``max_pixels_per_page`` pixels."""
        budget = self.config.input.max_pixels_per_page
        group: list[tuple[DocumentState, int]] = []
        pixels = 0
        for doc in docs:
            if doc.stream is None:
                continue
            for index, (w, h) in enumerate(doc.stream.sizes):
                if group and pixels + w * h > budget:
                    yield group
                    group, pixels = [], 0
                group.append((doc, index))
                pixels += w * h
        if group:
            yield group

    def _decode_page(self, doc: DocumentState, index: int) -> Optional[Page]:
        if doc.error is not None or doc.stream is None:
            return None
        t0 = time.perf_counter()
        try:
            return doc.stream.page(index)
        except DecodeError as exc:
            doc.error = exc.as_stage_error()
        except Exception as exc:
            doc.error = StageError("decode", type(exc).__name__, f"{doc.name}: page {index + 1}: {exc}")
        finally:
            doc.timings["decode"] = doc.timings.get("decode", 0.0) + _ms(t0)
        return None

    def _read_group(self, group: list[tuple[DocumentState, int]]) -> None:
        """Decode, detect and recognize one group of pages; each page keeps only its geometry afterwards."""
        entries = [(doc, page) for doc, index in group if (page := self._decode_page(doc, index)) is not None]
        try:
            read = self.read_text(entries)
        except _StageFailure as failure:
            by_doc: dict[int, list[tuple[DocumentState, Page]]] = {}
            for doc, page in entries:
                by_doc.setdefault(id(doc), []).append((doc, page))
            if len(by_doc) == 1:
                entries[0][0].error = entries[0][0].error or failure.error
                return
            log.warning("a group of %d documents failed in %s (%s); retrying one by one", len(by_doc),
                        failure.error.stage, failure.error.message)
            read = []
            for alone in by_doc.values():
                try:
                    read += self.read_text(alone)
                except _StageFailure as single:
                    alone[0][0].error = alone[0][0].error or single.error
        for doc, page, boxes, lines in read:
            if doc.error is not None:
                continue
            doc.pages.append(_without_pixels(page))
            doc.boxes.append(boxes if not isinstance(boxes, StageError) else [])
            doc.lines.append(lines if not isinstance(lines, StageError) else [])
            err = boxes if isinstance(boxes, StageError) else lines if isinstance(lines, StageError) else None
            doc.error = doc.error or err

    def read_text(self, entries: list[tuple[DocumentState, Page]]) -> list[tuple[DocumentState, Page, Any, Any]]:
        """(document, normalized page, boxes or StageError, lines or StageError) per page; nothing is stored
        on the documents here but timings, so a failed group can be read again document by document."""
        if not entries:
            return []
        with _stage("detect"):
            detected = self.detect(entries)
        with _stage("recognize"):
            return self.recognize(detected)

    def detect(self, entries: list[tuple[DocumentState, Page]]) -> list[tuple[DocumentState, Page, Any]]:
        norm = self.normalizer.detect([p for _, p in entries], self.detector.detect_batch)
        share, norm_share = norm.detect_ms / len(entries), norm.normalize_ms / len(entries)
        out = []
        for (doc, _), page, res in zip(entries, norm.pages, norm.boxes):  # upright (maybe rectified) pages
            doc.timings["normalize"] = doc.timings.get("normalize", 0.0) + norm_share
            doc.timings["detect"] = doc.timings.get("detect", 0.0) + share
            out.append((doc, page, res))
        return out

    def recognize(self, detected: list[tuple[DocumentState, Page, Any]]) -> list[tuple[DocumentState, Page, Any, Any]]:
        live = [(doc, page, boxes) for doc, page, boxes in detected if not isinstance(boxes, StageError)]
        pages = [PageBoxes(p.image, boxes, id(d), p.second_look, p.capture) for d, p, boxes in live]
        lines: dict[int, Any] = {}
        if any(p.boxes for p in pages):
            t0 = time.perf_counter()
            results = self.reader.read(pages)
            total, n_boxes = _ms(t0), sum(len(p.boxes) for p in pages)
            for (doc, page, boxes), res in zip(live, results):
                lines[id(page)] = res
                if boxes:
                    doc.timings["recognize"] = doc.timings.get("recognize", 0.0) + total * len(boxes) / n_boxes
        return [(doc, page, boxes, lines.get(id(page), [])) for doc, page, boxes in detected]

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


def _without_pixels(page: Page) -> Page:
    """The page once it has been read: the same size, index and transform (all that extraction and the result
    need), its pixels replaced by a read-only zero-byte view of that shape, so they can be freed."""
    shape = page.image.shape
    return replace(page, image=np.broadcast_to(np.zeros((1, 1, 3), np.uint8), shape), second_look=None)


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
