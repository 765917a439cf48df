"""Training loop, dev evaluation and packaging of the extractor (training venv: PaddleNLP).

The CLI is ``models.extractor.train``; this module is the library it drives.
"""
from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import paddle
import paddle.nn.functional as F
import yaml

from models.extractor.data import Doc, NoiseConfig, featurize, training_batches
from models.extractor.export import export_model
from models.extractor.labels import FIELDS, LABELS
from models.extractor.metrics import Scorer, score_key
from models.extractor.model import ExtractorModel, ModelSpec, build_model, count_parameters
from models.extractor.vocab import Vocab
from models.extractor.windows import IGNORE_LABEL, merge_windows

log = logging.getLogger(__name__)

CONFIG_NAME = "extractor.yaml"
VOCAB_NAME = "vocab.txt"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class TrainConfig:
    max_len: int = 512
    stride: int = 448
    line_sep: bool = False
    batch_size: int = 8
    lr: float = 5e-4
    weight_decay: float = 0.01
    warmup_steps: int = 100
    epochs: int = 20
    max_steps: int = 0  # 0 = no limit
    max_minutes: float = 0.0  # 0 = no limit
    eval_every: int = 150
    patience: int = 5  # evaluations without improvement before stopping
    seed: int = 0
    noise: NoiseConfig = field(default_factory=NoiseConfig)


@dataclass
class TrainResult:
    model: ExtractorModel
    best_report: dict
    best_step: int
    steps: int
    seconds: float
    history: list[dict]


def predict_probs(model: ExtractorModel, doc: Doc, vocab: Vocab, max_len: int, stride: int, line_sep: bool) -> tuple[np.ndarray, np.ndarray]:
    """Dygraph inference on one page: ``(probs over page tokens (N, C), gold label ids (N,))``."""
    ex = featurize(doc, vocab, max_len, stride, line_sep)
    with paddle.no_grad():
        logits = model.logits(
            paddle.to_tensor(ex.input_ids), paddle.to_tensor(ex.bbox), paddle.to_tensor(ex.attention_mask)
        )
        probs = F.softmax(logits, axis=-1).numpy()
    return merge_windows(probs, ex.spans, len(ex.token_labels)), ex.token_labels


def evaluate(model: ExtractorModel, docs: Sequence[Doc], vocab: Vocab, cfg: TrainConfig) -> dict:
    was_training = model.training
    model.eval()
    scorer = Scorer()
    for doc in docs:
        probs, gold = predict_probs(model, doc, vocab, cfg.max_len, cfg.stride, cfg.line_sep)
        keep = gold != IGNORE_LABEL
        pred = probs.argmax(-1)
        chars = [ch for t in doc.texts for ch in t]
        scorer.add(chars, gold[keep], pred[keep], probs[keep].max(-1))
    if was_training:
        model.train()
    return scorer.report()


def learning_rate(cfg: TrainConfig, step: int, progress: float) -> float:
    """Linear warm-up over ``warmup_steps``, then cosine decay to 5% of ``lr`` as ``progress`` goes 0 -> 1.

    ``progress`` is the larger of the step fraction and the wall-clock fraction of ``max_minutes``, so a
    time-capped run still ends at a low learning rate."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    p = min(max(progress, 0.0), 1.0)
    return cfg.lr * (0.05 + 0.95 * 0.5 * (1.0 + math.cos(math.pi * p)))


def _optimizer(model: ExtractorModel, cfg: TrainConfig) -> paddle.optimizer.Optimizer:
    no_decay = {p.name for n, p in model.named_parameters() if "bias" in n or "norm" in n.lower()}
    return paddle.optimizer.AdamW(
        learning_rate=cfg.lr,
        parameters=model.parameters(),
        weight_decay=cfg.weight_decay,
        apply_decay_param_fun=lambda name: name not in no_decay,
        grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0),
    )


def train(
    spec: ModelSpec,
    train_docs: Sequence[Doc],
    dev_docs: Sequence[Doc],
    vocab: Vocab,
    cfg: TrainConfig,
    init_state: Optional[dict] = None,
    on_eval: Optional[Callable[[dict], None]] = None,
) -> TrainResult:
    paddle.seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = build_model(spec)
    if init_state is not None:
        model.set_state_dict(init_state)
    windows_per_epoch = sum(max(1, math.ceil((d.n_chars + 1) / cfg.stride)) for d in train_docs)
    steps_per_epoch = max(1, math.ceil(windows_per_epoch / cfg.batch_size))
    total = cfg.epochs * steps_per_epoch
    if cfg.max_steps:
        total = min(total, cfg.max_steps)
    opt = _optimizer(model, cfg)
    log.info("model: %.2f M parameters; %d train pages (~%d steps/epoch), %d dev pages; plan %d steps",
             count_parameters(model) / 1e6, len(train_docs), steps_per_epoch, len(dev_docs), total)
    t0 = time.monotonic()
    deadline = t0 + cfg.max_minutes * 60 if cfg.max_minutes else math.inf
    best_key: tuple[float, float] = (-1.0, -1.0)
    best_state: dict = {}
    best_report: dict = {}
    best_step = 0
    history: list[dict] = []
    bad_evals = 0
    step = 0
    run_loss = 0.0
    stop = False

    def do_eval() -> bool:
        nonlocal best_key, best_state, best_report, best_step, bad_evals
        report = evaluate(model, dev_docs, vocab, cfg) if dev_docs else {"token": {"f1": 0.0}, "field_micro": {"f1": 0.0}}
        report.update(step=step, minutes=round((time.monotonic() - t0) / 60, 2))
        history.append(report)
        if on_eval:
            on_eval(report)
        log.info("step %d: dev token F1 %.4f, field F1 %.4f, doc acc %s", step, report["token"]["f1"],
                 report["field_micro"]["f1"], report.get("document_accuracy"))
        key = score_key(report)
        if key > best_key or not best_state:
            best_key, best_report, best_step, bad_evals = key, report, step, 0
            best_state = {k: v.numpy().copy() for k, v in model.state_dict().items()}
            return False
        bad_evals += 1
        return bad_evals >= cfg.patience

    model.train()
    for epoch in range(cfg.epochs):
        for batch in training_batches(train_docs, vocab, cfg.max_len, cfg.stride, cfg.line_sep, cfg.batch_size, rng, cfg.noise):
            logits = model.logits(
                paddle.to_tensor(batch.input_ids), paddle.to_tensor(batch.bbox), paddle.to_tensor(batch.attention_mask)
            )
            labels = paddle.to_tensor(batch.labels)
            loss = F.cross_entropy(
                logits.reshape([-1, len(LABELS)]), labels.reshape([-1, 1]), ignore_index=IGNORE_LABEL
            )
            elapsed = time.monotonic() - t0
            progress = max(step / total, elapsed / (cfg.max_minutes * 60) if cfg.max_minutes else 0.0)
            opt.set_lr(learning_rate(cfg, step, progress))
            loss.backward()
            opt.step()
            opt.clear_grad()
            step += 1
            run_loss = 0.98 * run_loss + 0.02 * float(loss) if step > 1 else float(loss)
            if step % 50 == 0:
                log.info("epoch %d step %d loss %.4f lr %.2e %.1f min", epoch, step, run_loss, opt.get_lr(),
                         (time.monotonic() - t0) / 60)
            out_of_budget = (cfg.max_steps and step >= cfg.max_steps) or time.monotonic() >= deadline
            if step % cfg.eval_every == 0 or out_of_budget:
                if do_eval():
                    log.info("early stop: no dev improvement in %d evaluations", cfg.patience)
                    stop = True
            if stop or out_of_budget:
                stop = True
                break
        if stop:
            break
    if not history or history[-1]["step"] != step:
        do_eval()
    model.set_state_dict(best_state)
    model.eval()
    return TrainResult(model, best_report, best_step, step, time.monotonic() - t0, history)


def package(
    result: TrainResult,
    spec: ModelSpec,
    cfg: TrainConfig,
    vocab: Vocab,
    out_dir: str | Path,
    extra: Optional[dict] = None,
) -> Path:
    """Export the model and write ``vocab.txt`` and ``extractor.yaml`` next to it."""
    out = Path(out_dir)
    if out.exists():
        for stale in ("inference.json", "inference.pdiparams", VOCAB_NAME, CONFIG_NAME):
            (out / stale).unlink(missing_ok=True)
    export_model(result.model, out)
    vocab.save(out / VOCAB_NAME)
    meta = {
        "format_version": FORMAT_VERSION,
        "model_file": "inference.json",
        "params_file": "inference.pdiparams",
        "vocab_file": VOCAB_NAME,
        "inputs": ["input_ids", "bbox", "attention_mask"],
        "output": "label probabilities [batch, length, num_labels]",
        "labels": list(LABELS),
        "fields": list(FIELDS),
        "max_len": cfg.max_len,
        "stride": cfg.stride,
        "line_sep": cfg.line_sep,
        "model": spec.to_dict(),
        "parameters": count_parameters(result.model),
        "training": {
            **{k: v for k, v in asdict(cfg).items() if k != "noise"},
            "noise": asdict(cfg.noise),
            "steps": result.steps,
            "best_step": result.best_step,
            "minutes": round(result.seconds / 60, 1),
            **(extra or {}),
        },
        "dev_metrics": result.best_report,
    }
    (out / CONFIG_NAME).write_text(yaml.safe_dump(meta, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


def save_checkpoint(model: ExtractorModel, spec: ModelSpec, path: str | Path) -> None:
    """Dygraph weights + spec for later fine-tuning (e.g. on OCR'd pages); not needed at runtime."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    paddle.save({"spec": spec.to_dict(), "state": copy.copy(model.state_dict())}, str(p))


def load_checkpoint(path: str | Path) -> tuple[ModelSpec, dict]:
    ck = paddle.load(str(path))
    return ModelSpec.from_dict(ck["spec"]), ck["state"]

