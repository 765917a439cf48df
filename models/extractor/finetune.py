"""Fine-tune the shipped extractor on corrected results (training venv; ``docpipe train --labels`` runs this).

    .venv-train/bin/python -m models.extractor.finetune --labels DIR [--base WEIGHTS] [--steps N] --out DIR

``DIR`` holds ``X.jpg`` + corrected ``X.json`` pairs (docs/labels_format.md). ``--base`` is an export folder
with ``model.pdparams`` (the trainable weights that :func:`models.extractor.trainer.package` writes beside
the inference program); the fine-tuned model is exported to ``--out`` in the base's feature format, with
the command, the folder and per-file problems recorded in its ``extractor.yaml``. Prints a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m models.extractor.finetune", description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, required=True, help="folder of images with corrected schema-v1 JSON beside them")
    ap.add_argument("--base", type=Path, default=None, help="export folder to start from (default: the shipped weights)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--noise", action="store_true", help="also corrupt the pages OCR-like while fine-tuning")
    ap.add_argument("--rehearse", type=Path, default=None,
                    help="synthetic training pages (docpipe synth --split train) mixed in, so the model keeps what "
                         "pre-training taught (label words, other layouts) while it learns the labelled pages")
    ap.add_argument("--rehearse-share", type=float, default=0.5, help="share of the batches' pages that are synthetic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    return ap


def mix_rehearsal(labelled: list, synthetic: list, share: float) -> list:
    """The labelled pages repeated so that about ``share`` of the mixture is ``synthetic`` (all of it, once)."""
    if not synthetic or share <= 0:
        return list(labelled)
    repeats = max(1, round(len(synthetic) * (1 - share) / (share * len(labelled))))
    return list(labelled) * repeats + list(synthetic)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    log = logging.getLogger("models.extractor.finetune")
    import paddle
    import yaml

    from models.extractor.corrections import load_labelled_folder
    from models.extractor.data import Curriculum, NoiseConfig, load_docs
    from models.extractor.model import ArchitectureSpec, build_model
    from models.extractor.export import BASE_NAME, load_base
    from models.extractor.trainer import TrainConfig, package, train
    from stages.contracts.registry import resolve_model
    from stages.extraction.ernie_features import LABELS, FeatureSpec, Vocab

    base = args.base or resolve_model("docpipe_extractor", "extract", None).directory
    meta = yaml.safe_load((base / "extractor.yaml").read_text(encoding="utf-8"))
    if tuple(meta.get("labels", ())) != LABELS:
        log.error("%s was trained with another label set (%d labels, this code has %d): retrain it first",
                  base, len(meta.get("labels", ())), len(LABELS))
        return 2
    if not (base / BASE_NAME).is_file():
        log.error("%s has no %s (trainable weights); export it with this version of models.extractor", base, BASE_NAME)
        return 2
    spec = ArchitectureSpec.from_dict(meta["model"])
    vocab = Vocab.load(base / meta.get("vocab_file", "vocab.txt"))
    pages, errors = load_labelled_folder(args.labels)
    for name, why in errors.items():
        log.warning("skipped %s: %s", name, why)
    docs = [p.doc for p in pages if p.found]
    if not docs:
        log.error("no usable labelled pages in %s", args.labels)
        return 2
    synthetic = load_docs(args.rehearse, split="train") if args.rehearse else []
    train_docs = mix_rehearsal(docs, synthetic, args.rehearse_share)
    model = build_model(spec)
    model.set_state_dict(load_base(base / BASE_NAME))
    features = FeatureSpec.from_meta(meta)
    cfg = TrainConfig(
        max_len=int(meta["max_len"]), stride=int(meta["stride"]), features=features, batch_size=args.batch_size,
        lr=args.lr, warmup_steps=max(1, args.steps // 10), max_steps=args.steps, eval_every=args.steps,
        checkpoint_every=max(1, args.steps), seed=args.seed,
        noise=NoiseConfig() if args.noise else NoiseConfig.none(), curriculum=Curriculum(0, 0, 0.0),
    )
    paddle.seed(args.seed)
    # the labelled pages are also the evaluation set: this reports the fit, not generalisation
    result = train(spec, train_docs, docs, vocab, cfg, model=model)
    command = "python -m models.extractor.finetune " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    package(result.model, spec, cfg, vocab, args.out, result.best_report, extra={
        "command": command, "base": str(base), "labels_dir": str(args.labels), "pages": len(docs),
        "fields_found": sum(len(p.found) for p in pages), "fields_not_found": sum(len(p.missing) for p in pages),
        "fields_from_source_lines": sum(len(p.from_source_lines) for p in pages), "skipped_files": errors, "steps_done": result.steps,
        "rehearsal": {"dir": str(args.rehearse or ""), "pages": len(synthetic), "share": args.rehearse_share},
    })
    sys.stdout.write(json.dumps({
        "out": str(args.out), "pages": len(docs), "steps": result.steps, "skipped": len(errors),
        "fields_found": sum(len(p.found) for p in pages), "fields_not_found": sum(len(p.missing) for p in pages),
        "fit_field_f1": result.best_report.get("field_micro", {}).get("f1"),
    }) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
