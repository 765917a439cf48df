"""``docpipe train --labels DIR --out OUT [--ernie ...]``: adapt the pipeline to corrected results.

By default (no network training; about a minute for 20 documents) OUT becomes an adapted folder:
``OUT/adapted.json`` holds the label wordings and layout relations learned per field from the corrections, and
``OUT/scorer/`` a refit of the learned decision's scorer with the corrections weighted in
(``python -m models.adapt.folder``, a child process); a config with ``extraction.model_dir: OUT`` runs the pipeline
with them (docs/adaptation.md). ``--ernie`` also fine-tunes
ERNIE-Layout on the same folder into ``OUT/ernie/``.

The ERNIE fine-tune needs PaddleNLP, which the runtime never imports. This command therefore always runs
``python -m models.extractor.finetune`` as a child process: with this interpreter when PaddleNLP is
importable here, otherwise with the training interpreter, found as (first that exists) ``--python``,
``$DOCPIPE_TRAIN_PYTHON``, ``<repo>/.venv-train/bin/python``. The child's log goes to stderr; its JSON
summary is printed on stdout. The folder format is docs/labels_format.md.

Both children write into a staging folder beside OUT; only when they succeed does it replace OUT (renames), so a
failed or interrupted run, or a label folder with nothing usable in it, leaves an earlier adapted folder (one a
service may be using) as it was. OUT is what this run learned, nothing carried over from an earlier one.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
TRAIN_PYTHON_ENV = "DOCPIPE_TRAIN_PYTHON"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--labels", type=Path, required=True, help="folder of X.jpg + corrected X.json (schema v1)")
    p.add_argument("--ernie", action="store_true",
                   help="also fine-tune ERNIE-Layout into OUT/ernie/ (slow; needs the training interpreter)")
    p.add_argument("--base", type=Path, default=None, help="extractor export to start from (default: the shipped one)")
    p.add_argument("--steps", type=int, default=200, help="optimizer steps (default 200)")
    p.add_argument("--out", type=Path, required=True, help="the adapted folder to write")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--threads", type=int, default=1, help="CPU threads of the training process")
    p.add_argument("--rehearse", type=Path, default=None,
                   help="synthetic training pages mixed in (docpipe synth OUT --split train); keeps pre-training")
    p.add_argument("--rehearse-share", type=float, default=0.5, help="share of synthetic pages in the mixture")
    p.add_argument("--python", type=Path, default=None, help="training interpreter (has PaddleNLP)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes reading the corrected documents for the refit (default: one per usable core)")
    p.add_argument("--no-refit", action="store_true",
                   help="learn the label wordings only, without refitting the scorer (seconds instead of re-reading "
                        "the corrected images)")


def training_python(explicit: Optional[Path]) -> Optional[str]:
    """The interpreter that runs the fine-tuning (see the module docstring), or None."""
    if explicit is not None:
        return str(explicit) if explicit.is_file() else None
    if importlib.util.find_spec("paddlenlp") is not None:
        return sys.executable
    env = os.environ.get(TRAIN_PYTHON_ENV)
    if env and Path(env).is_file():
        return env
    venv = REPO_ROOT / ".venv-train" / "bin" / "python"
    return str(venv) if venv.is_file() else None


def run(args: argparse.Namespace) -> int:
    if not args.labels.is_dir():
        sys.stderr.write(f"docpipe train: {args.labels} is not a folder\n")
        return 2
    if args.workers is not None and args.workers < 1:
        sys.stderr.write(f"docpipe train: --workers must be at least 1, not {args.workers}\n")
        return 2
    refused = refuse_out(args.out, args.labels)
    if refused:
        sys.stderr.write(f"docpipe train: {refused}\n")
        return 2
    staging = args.out.parent / f".{args.out.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        code = _train_into(args, staging)
        if code == 0:
            replace_folder(staging, args.out)
        return code
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def refuse_out(out: Path, labels: Path) -> Optional[str]:
    """Why ``out`` cannot become the adapted folder, or None: it is the label folder or inside it, or it is a file
    or a non-empty folder that is not an adapted folder (replacing it would delete what it holds)."""
    from stages.extraction.adapted import MANIFEST

    o, lab = out.resolve(), labels.resolve()
    if o == lab or lab in o.parents:
        return f"--out {out} is the label folder or inside it; choose a folder of its own"
    if out.exists() and not out.is_dir():
        return f"--out {out} is a file"
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        return f"--out {out} is a folder that holds other files and no adapted.json; choose a new folder"
    return None


def replace_folder(new: Path, out: Path) -> None:
    """Put the finished folder ``new`` at ``out`` (a sibling of it), replacing an earlier adapted folder only now,
    by renames on one file system: an interrupted or failed run leaves the earlier folder as it was."""
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        out.rename(old)
    try:
        new.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _train_into(args: argparse.Namespace, folder: Path) -> int:
    """The ERNIE fine-tune (with ``--ernie``) and the adapted folder's wordings and scorer, written into
    ``folder``; the children's exit status."""
    from stages.extraction.adapted import ERNIE_SUBDIR

    if args.ernie:
        code = _finetune(args, folder / ERNIE_SUBDIR)
        if code != 0:
            return code
    command = ["docpipe", "train", "--labels", str(args.labels), "--out", str(args.out)] + (
        ["--ernie", "--steps", str(args.steps)] if args.ernie else []) + (["--no-refit"] if args.no_refit else [])
    # the wording learner is training code (models/adapt): run as a child, like the fine-tune, never imported here
    cmd = [sys.executable, "-m", "models.adapt.folder", "--labels", str(args.labels.resolve()),
           "--out", str(folder.resolve()), "--command", json.dumps(command, ensure_ascii=False)]
    if args.ernie:
        cmd.append("--ernie")
    if args.no_refit:
        cmd.append("--no-scorer")
    if args.workers is not None:
        cmd += ["--workers", str(args.workers)]
    return int(subprocess.run(cmd, cwd=str(REPO_ROOT), env=_child_env()).returncode)


def _child_env(threads: Optional[int] = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


def _finetune(args: argparse.Namespace, out: Path) -> int:
    """Fine-tune ERNIE-Layout on the labelled folder into ``out`` (a child process, see the module docstring)."""
    if args.steps < 1:
        sys.stderr.write("docpipe train: --steps must be at least 1\n")
        return 2
    python = training_python(args.python)
    if python is None:
        sys.stderr.write(
            "docpipe train: no interpreter with PaddleNLP found; pass --python or set "
            f"{TRAIN_PYTHON_ENV} (e.g. .venv-train/bin/python, see requirements-train.txt)\n"
        )
        return 2
    cmd = [python, "-m", "models.extractor.finetune", "--labels", str(args.labels.resolve()),
           "--steps", str(args.steps), "--out", str(out.resolve()), "--lr", str(args.lr),
           "--threads", str(args.threads)]
    if args.base is not None:
        cmd += ["--base", str(args.base.resolve())]
    if args.rehearse is not None:
        cmd += ["--rehearse", str(args.rehearse.resolve()), "--rehearse-share", str(args.rehearse_share)]
    env = _child_env(args.threads)
    log.info("fine-tuning with %s", python)
    done = subprocess.run(cmd, cwd=str(REPO_ROOT), env=env)
    return int(done.returncode)
