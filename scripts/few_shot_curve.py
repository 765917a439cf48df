"""Few-shot adaptation curve of one layout family, end to end (docs/adaptation.md).

    python scripts/few_shot_curve.py --family fs_ledger --seed 101 --out WORK [--ks 0,1,5,20] [--score 50]
        [--other DEV5 --other-base BASE.json]

1. ``docpipe synth`` draws ``max(ks) + score`` dev documents of the family (``--layouts FAMILY``);
2. the first ``max(ks)`` are corrected as a reviewer would (``scripts/few_shot_labels.py``); the label folder for
   ``k`` holds the first ``k`` of them;
3. ``docpipe train --labels`` adapts from each (timed), and a config holding only ``extraction.model_dir`` points
   at the result;
4. ``docpipe eval`` scores the other ``score`` documents before (k = 0: the default config) and after each;
5. with ``--other``, the folder adapted from the most corrections is also run on another set (other layouts) and
   compared with ``--other-base`` (that set's default-config ``docpipe eval --json``).

Prints a markdown table and writes ``WORK/curve.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _docpipe(*args: str) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    subprocess.run([sys.executable, "-m", "pipeline.cli", *args], cwd=REPO, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def _copy_docs(src: Path, dst: Path, stems: list[str]) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        for p in src.glob(stem + ".*"):
            shutil.copy(p, dst / p.name)


def _scores(report: dict) -> dict:
    op = report["routing"]["operating_point"]
    return {"f1": report["model"]["micro"]["f1"], "document_accuracy": report["model"]["document_accuracy"],
            "straight_through": op["straight_through"], "wrong_straight_through": op["wrong_straight_through"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--family", required=True, help="a few-shot family (samples/synth/few_shot.py)")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", type=Path, required=True, help="work folder")
    p.add_argument("--ks", default="0,1,5,20")
    p.add_argument("--score", type=int, default=50, help="documents scored (not corrected)")
    p.add_argument("--other", type=Path, default=None, help="a set of other layouts (docpipe synth DEV5 --split dev)")
    p.add_argument("--other-base", type=Path, default=None, help="its default-config `docpipe eval --json`")
    args = p.parse_args(argv)
    ks = sorted({int(k) for k in args.ks.split(",")})
    most = max(ks)
    work = args.out
    docs = work / "docs"
    if not docs.is_dir():
        _docpipe("synth", str(docs), "--n", str(most + args.score), "--seed", str(args.seed), "--split", "dev",
                 "--layouts", args.family, "--workers", "1")
    stems = sorted(p.stem for p in docs.glob("*.jpg"))
    pool, score = stems[:most], stems[most:most + args.score]
    _copy_docs(docs, work / "score", score)
    labels_all = work / f"labels{most}"
    if most and not labels_all.is_dir():
        _copy_docs(docs, work / "pool", pool)
        env = dict(os.environ, PYTHONPATH=str(REPO))
        subprocess.run([sys.executable, str(REPO / "scripts" / "few_shot_labels.py"), str(work / "pool"),
                        str(labels_all)], cwd=REPO, env=env, check=True)
    rows = []
    for k in ks:
        config, seconds = None, 0.0
        if k:
            labels = work / f"labels{k}"
            if k != most:
                shutil.rmtree(labels, ignore_errors=True)
                _copy_docs(labels_all, labels, pool[:k])
            adapted = work / f"adapted{k}"
            t0 = time.perf_counter()
            _docpipe("train", "--labels", str(labels), "--out", str(adapted))
            seconds = time.perf_counter() - t0
            config = work / f"adapted{k}.yaml"
            config.write_text(f"extraction:\n  model_dir: {adapted.resolve()}\n", encoding="utf-8")
        report_path = work / f"eval_k{k}.json"
        with_config = ["--config", str(config)] if config else []
        _docpipe("eval", str(work / "score"), "--json", str(report_path), *with_config)
        row = {"k": k, "adaptation_seconds": round(seconds, 1), **_scores(json.loads(report_path.read_text()))}
        if k:
            row["wordings"] = json.loads((work / f"adapted{k}" / "adapted.json").read_text())["wordings"]
        rows.append(row)
    out = {"family": args.family, "seed": args.seed, "scored": len(score), "rows": rows}
    if args.other is not None and most:
        report_path = work / "other_adapted.json"
        _docpipe("eval", str(args.other), "--json", str(report_path), "--config", str(work / f"adapted{most}.yaml"))
        other = {"adapted_f1": json.loads(report_path.read_text())["model"]["micro"]["f1"]}
        if args.other_base is not None:
            other["base_f1"] = json.loads(args.other_base.read_text())["model"]["micro"]["f1"]
            other["delta"] = round(other["adapted_f1"] - other["base_f1"], 4)
        out["other"] = other
    (work / "curve.json").write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"| {args.family} k | F1 | document accuracy | straight through (wrong) | adaptation s |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['k']} | {r['f1']:.3f} | {r['document_accuracy']:.2f} | {r['straight_through']} "
              f"({r['wrong_straight_through']}) | {r['adaptation_seconds']:.1f} |")
    if "other" in out:
        print(f"other layouts: {json.dumps(out['other'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
