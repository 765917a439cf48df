"""Typed configuration. YAML files in ``configs/`` load into these objects; unknown keys are an error."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stages.contracts.fields import FIELD_KEYS
from stages.contracts.registry import check_model_key


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PredictorConfig(_Strict):
    """How a Paddle Inference predictor is built (shared by every model stage)."""

    device: Literal["cpu", "gpu"] = "cpu"
    gpu_id: int = 0
    gpu_memory_pool_mb: int = 1024
    cpu_threads: int = Field(2, ge=1, description="cpu_math_library_num_threads per predictor")
    mkldnn: bool = True
    # oneDNN caches one primitive set per distinct input shape; bound it (RapidOCR-on-Paddle grew to 2.4 GB).
    mkldnn_cache_capacity: int = Field(20, ge=0)
    # oneDNN bfloat16 for the models the registry marks bf16_ok (the recognizers): "auto" uses it when the CPU
    # has fast bf16 (avx512_bf16/AMX), "on" fails the build where it does not, "off" keeps fp32 everywhere.
    cpu_bf16: Literal["auto", "on", "off"] = "auto"
    ir_optim: bool = True
    tensorrt: bool = False
    tensorrt_precision: Literal["fp32", "fp16"] = "fp16"
    tensorrt_use_static: bool = True
    tensorrt_cache_dir: Optional[Path] = None
    profile: bool = False

    @field_validator("cpu_bf16", mode="before")
    @classmethod
    def _yaml_on_off(cls, v):
        # YAML 1.1 reads a bare on/off as a boolean
        return {True: "on", False: "off"}.get(v, v) if isinstance(v, bool) else v


class InputConfig(_Strict):
    pdf_dpi: int = Field(200, ge=36, le=600)
    max_pages: int = Field(50, ge=1)
    max_pixels_per_page: int = Field(60_000_000, ge=1)
    # all pages of one document together (checked from the headers before any pixel is decoded): bounds the
    # work one upload can ask for; memory is bounded by a page because pages are decoded one at a time
    max_pixels_per_document: int = Field(300_000_000, ge=1)
    max_file_bytes: int = Field(200 * 1024 * 1024, ge=1)


class DetectionConfig(_Strict):
    model: str = "ppocrv4_det"
    model_dir: Optional[Path] = None
    limit_side_len: int = Field(960, ge=64, description="long side of the network input is at most this")
    max_upscale: float = Field(1.0, gt=0, description="never scale a page up by more than this")
    thresh: float = Field(0.3, gt=0, lt=1)
    box_thresh: float = Field(0.6, gt=0, lt=1)
    unclip_ratio: float = Field(1.5, gt=0)
    max_candidates: int = Field(1000, ge=1)
    min_size: float = Field(3.0, ge=0)

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: str) -> str:
        check_model_key(v, "det")
        return v


class RecognitionConfig(_Strict):
    # the recognizer for every page that is not a fax or a photo: PP-OCRv4 rec as shipped, with a check head that
    # reads every line a second time (models/recognizer/check.py; "ppocrv4_rec" without it); "ppocrv4_rec_scan" is
    # PP-OCRv4 with its head re-fitted on scanned lines (docs/real_world_pages.md)
    model: str = "ppocrv4_rec_checked"
    model_dir: Optional[Path] = None
    dict_path: Optional[Path] = None
    image_height: int = 48
    # crops up to 512 px wide (at image_height) go side by side into shared rows, one input shape for the whole run;
    # false: every crop gets a width bucket of its own (stages/recognition/recognizer.py)
    packing: bool = True
    decoder: Literal["greedy", "beam"] = "beam"
    beam_width: int = Field(5, ge=1)
    use_cls: bool = False
    cls_model: str = "ppocr_mobile_v2_cls"
    cls_model_dir: Optional[Path] = None
    cls_thresh: float = 0.9
    drop_score: float = Field(0.5, ge=0, le=1)
    # the recognizer for binarised pages (faxes): PP-OCRv4 with its head re-fitted on fax lines by
    # models/recognizer/train.py; null = the main model reads them too (docs/real_world_pages.md)
    fax_model: Optional[str] = "ppocrv4_rec_fax"
    fax_model_dir: Optional[Path] = None
    # the recognizer for photographed sheets (rectified from their outline), made the same way on photo lines
    photo_model: Optional[str] = "ppocrv4_rec_photo"
    photo_model_dir: Optional[Path] = None

    @field_validator("model")
    @classmethod
    def _known_rec(cls, v: str) -> str:
        check_model_key(v, "rec")
        return v

    @field_validator("fax_model", "photo_model")
    @classmethod
    def _known_capture_rec(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            check_model_key(v, "rec")
        return v

    @field_validator("cls_model")
    @classmethod
    def _known_cls(cls, v: str) -> str:
        check_model_key(v, "cls")
        return v


class PageConfig(_Strict):
    """Page normalisation before detection (stages/page/): photographed sheets, faxes, orientation."""

    # photographed pages: cut the sheet out of its background along a confident outline and rectify it
    boundary: bool = True
    flatten_light: bool = True  # divide out shadows and light gradients of a rectified photo
    # binarised pages (faxes) are also read from a despeckled rendering; each line keeps the reading with the
    # higher score
    fax_second_look: bool = True
    # runs of leader dots between a label and its value (标签………值) painted over before detection, so the two are
    # detected apart (stages/page/leaders.py)
    erase_leaders: bool = True
    orientation: bool = True  # turn sideways and upside-down pages upright (uses recognition.cls_model)
    # upside down when the mean upside-down probability of the sampled lines is above this (dev: upright pages
    # reach 0.54, pages turned over fall to 0.70; docs/decisions.md, "Orientation from the page's own detection")
    flip_threshold: float = Field(0.6, gt=0, lt=1)


class ReviewConfig(_Strict):
    """Routing (``stages/extraction/routing.py``): a document goes straight through when no field is invalid, no
    required field is missing and its risk P(any field wrong), from the calibrated field confidences, is at most
    ``max_document_error_rate``."""

    # P(any field wrong) a document may carry and still go straight through. 0.08: the largest target at which
    # the dev split (seed 5, out-of-fold confidences) kept <= 0.5% wrong documents among straight-through ones
    # (models/calibration/fit.py prints the curve; docs/confidence.md)
    max_document_error_rate: float = Field(0.08, gt=0, le=1)
    # a found field whose calibrated confidence is below this is always a review reason
    confidence_threshold: float = Field(0.5, ge=0, le=1)
    # always review reasons, from the extractor's own evidence (stages/extraction/routing.py): a value its extractor
    # scored below min_extractor_score (weak_evidence:<field>), or one with a rival value scored within
    # min_rival_margin (close_rival:<field>). Chosen on dev read with a quarter of the label wordings withheld
    # (docs/confidence.md); 0 turns either off
    min_extractor_score: float = Field(0.4, ge=0, le=1)
    min_rival_margin: float = Field(0.1, ge=0, le=1)
    # field confidence = calibrated P(value correct) by the calibrator of the source that decided the field
    # (models/weights/calibration/<source>.json, fitted by models/calibration/fit.py); a source without one, or
    # false here: the raw extractor score x mean recognition probability, and review reason uncalibrated:<source>
    calibrated: bool = True
    # default: extraction.model_dir's calibration/ when that is set, else the registry's docpipe_calibration weights
    calibration_dir: Optional[Path] = None
    # None: the fields marked required in stages/contracts/fields.py
    required_fields: Optional[tuple[str, ...]] = None

    @field_validator("required_fields")
    @classmethod
    def _known_fields(cls, v: Optional[tuple[str, ...]]) -> Optional[tuple[str, ...]]:
        unknown = [k for k in (v or ()) if k not in FIELD_KEYS]
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}; known: {', '.join(FIELD_KEYS)}")
        return v


class ExtractionConfig(_Strict):
    # learned is the default: on dev it matches or beats the rules in wrong fields and document accuracy, and
    # with the rules' confidence for the values they share it sends as many documents straight through, with no
    # more wrong among them (docs/extraction_measured.md); rules: the label lexicon and strategies alone.
    # hybrid: candidates from both; the preferred source's value is taken when it validates, else the other's
    # learned: every rule strategy's and type detector's candidates scored by a trained model, one joint
    # assignment per document (docs/extraction.md)
    method: Literal["hybrid", "model", "rules", "learned"] = "learned"
    prefer: Literal["rules", "model"] = "rules"
    # hybrid only: per field "model" | "rules" (whose value first) | "agreement" (prefer's value first, and
    # differing valid values are the review reason extractors_disagree:<field>); unlisted fields follow prefer
    policy: dict[str, Literal["model", "rules", "agreement"]] = Field(default_factory=dict)
    # an adapted folder (`docpipe train --labels`, holds adapted.json: learned label wordings for the rules, maybe an
    # ERNIE-Layout fine-tune in ernie/; docs/adaptation.md), or a plain ERNIE-Layout export; default: none adapted,
    # and the model (method model/hybrid) from models/weights/extractor
    model_dir: Optional[Path] = None
    # learned only: folder of scorer.txt and calibration.json (default models/weights/scorer, trained by
    # python -m models.scorer.train)
    scorer_dir: Optional[Path] = None
    redecode: bool = True  # constrained CTC re-decoding of invalid ID/phone/date/amount values
    lexicons: bool = True  # names' surnames and addresses' divisions re-read against lexicons (lexicon_reread.py)
    # labels with one character misread (保险期滨日) read as the rules' label when the frames allow (label_reread.py)
    label_reread: bool = True


class OutputConfig(_Strict):
    # per-line character boxes [x0, y0, x1, y1] and probabilities (for audits and extractor training)
    include_chars: bool = False
    # a "diagnostics" section with what each extraction step decided (used by `docpipe eval`)
    diagnostics: bool = False


class EngineConfig(_Strict):
    # auto: on CPU, worker processes (Paddle's run() holds the GIL, threads do not overlap);
    # on GPU, threads in one process sharing one CUDA context. inline: one in-process worker.
    mode: Literal["auto", "inline", "threads", "processes"] = "auto"
    workers: int = Field(0, ge=0, description="0 = usable cores // threads_per_worker (CPU), 1 (GPU)")
    # auto workers (0) never plan more processes than fit in available memory at this much each
    # (one CPU worker's peak, docs/decisions.md); 0 = no memory cap
    worker_memory_mb: int = Field(800, ge=0)
    # CPU math threads of each worker process's predictors (replaces predictor.cpu_threads there);
    # the single-document path (extract(), inline) keeps predictor.cpu_threads
    threads_per_worker: int = Field(1, ge=1)
    # documents per worker batch; a worker holds at most 2 x max_batch, so smaller batches balance the
    # tail of a run across processes (docs/decisions.md)
    max_batch: int = Field(4, ge=1)
    max_wait_ms: float = Field(8.0, ge=0)
    queue_size: int = Field(16, ge=1)


class BatchConfig(_Strict):
    """``docpipe batch``: how often progress is reported when stderr is not a terminal."""

    progress_interval_s: float = Field(10.0, gt=0, description="seconds between plain progress lines")


class WatchConfig(_Strict):
    """``docpipe watch``: when a dropped file counts as complete, and how often to look and report."""

    stable_interval_s: float = Field(
        2.0, ge=0, description="a file is taken once its size and mtime have not changed for this long"
    )
    rescan_interval_s: float = Field(
        10.0, gt=0, description="full rescan of the inbox (safety net for missed filesystem events)"
    )
    poll_interval_s: float = Field(1.0, gt=0, description="PollingObserver period (--poll)")
    status_interval_s: float = Field(60.0, gt=0, description="seconds between status lines")
    handoff_size: int = Field(16, ge=1, description="files handed to the engine per call")
    ignore_patterns: tuple[str, ...] = Field(
        ("*.part", "*.tmp", "*.crdownload", "*.partial", "*.swp", "~$*", "~*.tmp"),
        description="glob patterns of names never taken (dotfiles are always ignored)",
    )


class ServiceConfig(_Strict):
    """``docpipe serve``: bind address, auth, job store, retention and admission limits (docs/service.md)."""

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    # bearer token; the DOCPIPE_TOKEN environment variable wins over this. Required on a non-loopback bind.
    token: Optional[str] = None
    # jobs.sqlite3 (inputs, results, corrections) and the lock file; null = platformdirs.user_data_dir("docpipe")
    data_dir: Optional[Path] = None
    # Host header names accepted (DNS rebinding guard); "*" accepts any, "*.example.com" a domain's names
    allowed_hosts: list[str] = ["localhost", "127.0.0.1", "::1"]
    # origins (scheme://host[:port]) beside the service's own that may send POST/PUT/PATCH/DELETE
    allowed_origins: list[str] = []
    retention_hours: float = Field(24.0, gt=0, description="finished jobs and their inputs are deleted after this")
    correction_retention_days: float = Field(90.0, gt=0, description="approved corrections are deleted after this")
    max_json_bytes: int = Field(1024 * 1024, ge=1024, description="body of a JSON request (a correction)")
    # connections uvicorn serves at once; beyond it new ones get 503
    limit_concurrency: int = Field(64, ge=1)
    page_renders: int = Field(2, ge=1, description="review page images rendered at once")
    max_documents_per_job: int = Field(100, ge=1)
    max_request_bytes: int = Field(512 * 1024 * 1024, ge=1, description="whole POST /v1/jobs body")
    # documents accepted into jobs but not finished; beyond this POST /v1/jobs answers 503
    max_queued_documents: int = Field(1000, ge=1)
    # documents the service keeps inside the engine at once (sync + jobs); 0 = the engine's own bound
    # (queue_size + workers x 2 x max_batch). Beyond it POST /v1/extract answers 429.
    max_in_flight: int = Field(0, ge=0)
    # of those, at most this many come from jobs, so synchronous calls are not starved; 0 = workers x 2 x max_batch
    job_in_flight: int = Field(0, ge=0)
    retry_after_s: int = Field(2, ge=1, description="Retry-After on 202/429/503 answers")
    json_logs: bool = True


class DocpipeConfig(_Strict):
    predictor: PredictorConfig = PredictorConfig()
    input: InputConfig = InputConfig()
    detection: DetectionConfig = DetectionConfig()
    recognition: RecognitionConfig = RecognitionConfig()
    page: PageConfig = PageConfig()
    extraction: ExtractionConfig = ExtractionConfig()
    review: ReviewConfig = ReviewConfig()
    output: OutputConfig = OutputConfig()
    engine: EngineConfig = EngineConfig()
    batch: BatchConfig = BatchConfig()
    watch: WatchConfig = WatchConfig()
    service: ServiceConfig = ServiceConfig()


def with_overrides(config: DocpipeConfig, **sections: dict[str, Any]) -> DocpipeConfig:
    """A copy of ``config`` with some keys of some sections replaced, validated like a loaded file:
    ``with_overrides(config, engine={"mode": "inline"}, predictor={"cpu_threads": 1})``. An unknown
    section or key raises ``ValueError``."""
    update = {}
    for name, values in sections.items():
        if name not in DocpipeConfig.model_fields:
            raise ValueError(f"unknown config section {name!r}")
        section = getattr(config, name)
        update[name] = type(section).model_validate({**section.model_dump(), **values})
    return config.model_copy(update=update)


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


def load_config(path: str | Path | None = None) -> DocpipeConfig:
    """Load a YAML file into a :class:`DocpipeConfig`; ``None`` gives the defaults."""
    if path is None:
        return DocpipeConfig()
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config {p}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {p} is not valid YAML: {exc}") from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config {p} must be a mapping at the top level")
    try:
        return DocpipeConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"config {p}: {exc}") from exc
