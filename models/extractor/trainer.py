"""Training loop, dev evaluation and packaging of the extractor (training venv: PaddleNLP).

The CLI is ``models.extractor.train``; this module is the library it drives.
"""
from __future__ import annotations

import logging
import shutil
import math
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import paddle
import paddle.nn.functional as F
import yaml

from models.extractor.data import Curriculum, TrainingDoc, NoiseConfig, batch_stream, featurize
from models.extractor.export import BASE_NAME, export_model, save_base
from models.extractor.metrics import Scorer, score_key
from models.extractor.model import ExtractorModel, ArchitectureSpec, build_model, count_parameters
from stages.extraction.ernie_features import FIELDS, IGNORE_LABEL, LABELS, FeatureSpec, Vocab, merge_windows

log = logging.getLogger(__name__)

CONFIG_NAME = "extractor.yaml"
VOCAB_NAME = "vocab.txt"
FORMAT_VERSION = 2  # 2: features: block, key labels


@dataclass(frozen=True)
class TrainConfig:
    max_len: int = 512
    stride: int = 448
    features: FeatureSpec = field(default_factory=FeatureSpec)
    batch_size: int = 8
    lr: float = 5e-4
    min_lr_ratio: float = 0.05
    weight_decay: float = 0.01
    warmup_steps: int = 200
    max_steps: int = 3000  # the schedule's length; training stops there
    eval_every: int = 300
    checkpoint_every: int = 100
    patience: int = 0  # evaluations without improvement before stopping (0 = never stop early)
    seed: int = 0
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    curriculum: Curriculum = field(default_factory=Curriculum)

    def to_dict(self) -> dict:
        d = asdict(self)
        return d


@dataclass
class TrainResult:
    model: ExtractorModel
    best_report: dict
    best_step: int
    steps: int
    seconds: float
    history: list[dict]


def predict_probs(model: ExtractorModel, doc: TrainingDoc, vocab: Vocab, max_len: int, stride: int, spec: FeatureSpec) -> tuple[np.ndarray, np.ndarray]:
    """Dygraph inference on one page: ``(probs over page tokens (N, C), gold label ids (N,))``."""
    ex = featurize(doc, vocab, max_len, stride, spec)
    with paddle.no_grad():
        logits = model.logits(
            paddle.to_tensor(ex.input_ids), paddle.to_tensor(ex.bbox), paddle.to_tensor(ex.attention_mask)
        )
        probs = F.softmax(logits, axis=-1).numpy()
    return merge_windows(probs, ex.spans, len(ex.token_labels)), ex.token_labels


def evaluate(model: ExtractorModel, docs: Sequence[TrainingDoc], vocab: Vocab, cfg: TrainConfig) -> dict:
    was_training = model.training
    model.eval()
    scorer = Scorer()
    for doc in docs:
        probs, gold = predict_probs(model, doc, vocab, cfg.max_len, cfg.stride, cfg.features)
        keep = gold != IGNORE_LABEL
        pred = probs.argmax(-1)
        chars = [ch for t in doc.texts for ch in t]
        scorer.add(chars, gold[keep], pred[keep], probs[keep].max(-1))
    if was_training:
        model.train()
    return scorer.report()


def learning_rate(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up over ``warmup_steps``, then cosine decay by step to ``min_lr_ratio * lr`` at
    ``max_steps`` (a function of the step alone: a resumed run continues the same curve)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    span = max(1, cfg.max_steps - cfg.warmup_steps)
    p = min(max((step - cfg.warmup_steps) / span, 0.0), 1.0)
    lo = cfg.min_lr_ratio
    return cfg.lr * (lo + (1.0 - lo) * 0.5 * (1.0 + math.cos(math.pi * p)))


def _optimizer(model: ExtractorModel, cfg: TrainConfig) -> paddle.optimizer.Optimizer:
    no_decay = {p.name for n, p in model.named_parameters() if "bias" in n or "norm" in n.lower()}
    return paddle.optimizer.AdamW(
        learning_rate=cfg.lr,
        parameters=model.parameters(),
        weight_decay=cfg.weight_decay,
        apply_decay_param_fun=lambda name: name not in no_decay,
        grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0),
    )


def _portable_opt_state(model: ExtractorModel, state: dict) -> dict:
    """Optimizer state keyed by structured parameter names (``encoder.layer.0...``) instead of the
    generated ones (``linear_7.w_0``), which depend on how many layers the process built before."""
    names = sorted(((p.name, n) for n, p in model.named_parameters()), key=lambda x: -len(x[0]))
    out: dict = {}
    for key, value in state.items():
        for gen, structured in names:
            if key.startswith(gen + "_"):
                out[f"{structured}::{key[len(gen):]}"] = value
                break
        else:
            out[key] = value
    return out


def _local_opt_state(model: ExtractorModel, state: dict) -> dict:
    gen = {n: p.name for n, p in model.named_parameters()}
    out: dict = {}
    for key, value in state.items():
        structured, sep, rest = key.partition("::")
        out[gen[structured] + rest if sep else key] = value
    return out


def _atomic_save(obj: dict, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    paddle.save(obj, str(tmp))
    os.replace(tmp, path)


class StopFlag:
    """Set by SIGTERM/SIGINT: the loop saves a checkpoint and returns instead of dying mid-step."""

    def __init__(self) -> None:
        self.set = False

    def install(self) -> None:
        def handler(signum: int, frame: object) -> None:
            log.info("signal %d: stopping after this step", signum)
            self.set = True

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


def train(
    spec: ArchitectureSpec,
    train_docs: Sequence[TrainingDoc],
    dev_docs: Sequence[TrainingDoc],
    vocab: Vocab,
    cfg: TrainConfig,
    model: Optional[ExtractorModel] = None,
    work_dir: Optional[Path] = None,
    resume: bool = False,
    on_eval: Optional[Callable[[dict], None]] = None,
    on_best: Optional[Callable[[ExtractorModel, dict], None]] = None,
    ocr_docs: Sequence[TrainingDoc] = (),
    stop: Optional[StopFlag] = None,
) -> TrainResult:
    """Train for ``cfg.max_steps`` steps (or until ``patience`` evaluations bring nothing, or ``stop``).

    ``work_dir`` receives ``last.pdparams`` (model, optimizer, data RNG, step, history) every
    ``checkpoint_every`` steps and ``best.pdparams`` (model only) at each dev improvement; ``resume``
    continues from ``last.pdparams``. ``on_best`` is called with the model at each improvement (export).
    """
    paddle.seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    if model is None:
        model = build_model(spec)
    opt = _optimizer(model, cfg)
    step = 0
    best_key: tuple[float, float] = (-1.0, -1.0)
    best_step = 0
    best_report: dict = {}
    history: list[dict] = []
    bad_evals = 0
    last_path = work_dir / "last.pdparams" if work_dir else None
    best_path = work_dir / "best.pdparams" if work_dir else None
    if work_dir:
        work_dir.mkdir(parents=True, exist_ok=True)
    if resume:
        if last_path is None or not last_path.is_file():
            raise FileNotFoundError(f"nothing to resume: {last_path}")
        ck = paddle.load(str(last_path))
        model.set_state_dict(ck["state"])
        opt.set_state_dict(_local_opt_state(model, ck["opt"]))
        rng.bit_generator.state = ck["rng"]
        step, best_step, bad_evals = int(ck["step"]), int(ck["best_step"]), int(ck["bad_evals"])
        best_key = tuple(ck["best_key"])  # type: ignore[assignment]
        best_report, history = ck["best_report"], list(ck["history"])
        paddle.seed(cfg.seed + step)
        log.info("resumed at step %d (best dev field F1 %.4f at step %d)", step, best_key[0], best_step)
    log.info("model: %.2f M parameters; %d train pages (+%d OCR-aligned), %d dev pages; schedule %d steps",
             count_parameters(model) / 1e6, len(train_docs), len(ocr_docs), len(dev_docs), cfg.max_steps)

    def checkpoint() -> None:
        if last_path is None:
            return
        _atomic_save({
            "spec": spec.to_dict(), "state": model.state_dict(), "opt": _portable_opt_state(model, opt.state_dict()), "rng": rng.bit_generator.state,
            "step": step, "best_step": best_step, "best_key": list(best_key), "bad_evals": bad_evals,
            "best_report": best_report, "history": history,
        }, last_path)

    def do_eval() -> bool:
        nonlocal best_key, best_report, best_step, bad_evals
        report = evaluate(model, dev_docs, vocab, cfg) if dev_docs else {"token": {"f1": 0.0}, "field_micro": {"f1": 0.0}}
        report.update(step=step, minutes=round((time.monotonic() - t0) / 60, 2))
        history.append(report)
        if on_eval:
            on_eval(report)
        log.info("step %d: dev token F1 %.4f, field F1 %.4f, doc acc %s", step, report["token"]["f1"],
                 report["field_micro"]["f1"], report.get("document_accuracy"))
        key = score_key(report)
        if key > best_key:
            best_key, best_report, best_step, bad_evals = key, report, step, 0
            if best_path is not None:
                _atomic_save({"spec": spec.to_dict(), "state": model.state_dict()}, best_path)
            if on_best:
                on_best(model, report)
            return False
        bad_evals += 1
        return bool(cfg.patience) and bad_evals >= cfg.patience

    t0 = time.monotonic()
    counter = [step]
    stream = batch_stream(
        train_docs, vocab, cfg.max_len, cfg.stride, cfg.features, cfg.batch_size, rng, cfg.noise,
        cfg.curriculum, step=lambda: counter[0], ocr_docs=ocr_docs,
    )
    model.train()
    run_loss = 0.0
    step_times: list[float] = []
    while step < cfg.max_steps and not (stop and stop.set):
        batch = next(stream)
        ts = time.monotonic()
        logits = model.logits(
            paddle.to_tensor(batch.input_ids), paddle.to_tensor(batch.bbox), paddle.to_tensor(batch.attention_mask)
        )
        loss = F.cross_entropy(
            logits.reshape([-1, spec.num_labels]), paddle.to_tensor(batch.labels).reshape([-1, 1]),
            ignore_index=IGNORE_LABEL,
        )
        opt.set_lr(learning_rate(cfg, step))
        loss.backward()
        opt.step()
        opt.clear_grad()
        step_times.append(time.monotonic() - ts)
        step += 1
        counter[0] = step
        run_loss = 0.98 * run_loss + 0.02 * float(loss) if run_loss else float(loss)
        if step % 50 == 0:
            log.info("step %d loss %.4f lr %.2e curriculum %.2f step %.2fs (median of 50) %.1f min", step, run_loss,
                     opt.get_lr(), cfg.curriculum.level(step), float(np.median(step_times[-50:])),
                     (time.monotonic() - t0) / 60)
        if step % cfg.eval_every == 0 or step == cfg.max_steps:
            if do_eval():
                log.info("early stop: no dev improvement in %d evaluations", cfg.patience)
                checkpoint()
                break
        if step % cfg.checkpoint_every == 0:
            checkpoint()
    if not history or history[-1]["step"] != step:
        do_eval()
    checkpoint()
    if best_path is not None and best_path.is_file():
        model.set_state_dict(paddle.load(str(best_path))["state"])
    model.eval()
    return TrainResult(model, best_report, best_step, step, time.monotonic() - t0, history)


def package(
    model: ExtractorModel,
    spec: ArchitectureSpec,
    cfg: TrainConfig,
    vocab: Vocab,
    out_dir: str | Path,
    dev_report: dict,
    extra: Optional[dict] = None,
) -> Path:
    """Export the model with ``vocab.txt`` and ``extractor.yaml`` (labels, feature format, windowing,
    model, training config, dev metrics, ``extra`` such as the command). Written to a sibling folder
    first and moved in file by file, so a reader never sees a half-written export."""
    out = Path(out_dir)
    stage = out.with_name(out.name + ".staging")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    export_model(model, stage)
    save_base(model, stage / BASE_NAME)
    vocab.save(stage / VOCAB_NAME)
    meta = {
        "format_version": FORMAT_VERSION,
        "model_file": "inference.json",
        "params_file": "inference.pdiparams",
        "vocab_file": VOCAB_NAME,
        "inputs": ["input_ids", "bbox", "attention_mask"],
        "output": "label probabilities [batch, length, num_labels]",
        "labels": list(LABELS),
        "fields": list(FIELDS),
        "features": cfg.features.to_dict(),
        "max_len": cfg.max_len,
        "stride": cfg.stride,
        "model": spec.to_dict(),
        "parameters": count_parameters(model),
        "training": {**cfg.to_dict(), **(extra or {})},
        "dev_metrics": dev_report,
    }
    (stage / CONFIG_NAME).write_text(yaml.safe_dump(meta, allow_unicode=True, sort_keys=False), encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("inference.pdiparams", "inference.json", BASE_NAME, VOCAB_NAME, CONFIG_NAME):
        os.replace(stage / name, out / name)
    shutil.rmtree(stage, ignore_errors=True)
    return out
