"""Character embeddings for the extractor, initialised from Baidu LAC's word embeddings (numpy only).

No pretrained ERNIE/BERT weights can be reached here; the sdist of ``lac==2.1.2`` on PyPI (Apache-2.0)
ships ``LAC/lac_model/model/word_emb`` (58,224 x 128 float32 after a 29-byte header) and its vocabulary
``LAC/lac_model/conf/word.dic`` (``id<TAB>word`` per line), plus ``q2b.dic`` (full-width / traditional ->
the form LAC looks up). They are read straight out of the tarball (nothing is built or installed)::

    python -m models.extractor.lac_init --download /tmp/lac --hidden 256 --out /tmp/lac_init.npz

Each vocabulary character takes LAC's vector of the character itself, else of its ``q2b`` form, else of
its NFKC form (6,529 of the 6,624 OCR dictionary characters are covered); the rest (and the special
tokens) get random vectors of the same spread. With ``hidden != 128`` the table is projected by a fixed
random matrix with orthonormal columns (inner products, hence neighbours, are kept), then scaled to
``rms``. Attribution: LAC (Lexical Analysis of Chinese), Baidu, Apache License 2.0.
"""
from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from stages.extraction.ernie_features import Vocab

log = logging.getLogger(__name__)

LAC_REQUIREMENT = "lac==2.1.2"
SDIST_NAME = "LAC-2.1.2.tar.gz"
EMB_MEMBER = "LAC-2.1.2/LAC/lac_model/model/word_emb"
DIC_MEMBER = "LAC-2.1.2/LAC/lac_model/conf/word.dic"
Q2B_MEMBER = "LAC-2.1.2/LAC/lac_model/conf/q2b.dic"
HEADER_BYTES = 29
LAC_ROWS, LAC_DIM = 58224, 128
# The sdist's setup.py imports pkg_resources, which new setuptools no longer has; pip prepares metadata
# even for ``pip download``, so the isolated build environment is pinned to a setuptools that has it.
BUILD_CONSTRAINT = "setuptools<81\n"


def download_sdist(directory: Path) -> Path:
    """``pip download --no-deps --no-binary :all: lac==2.1.2 -d DIR`` (with a build constraint, see above)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / SDIST_NAME
    if target.is_file():
        return target
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write(BUILD_CONSTRAINT)
        constraint = fh.name
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--build-constraint", constraint, LAC_REQUIREMENT, "-d", str(directory)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"pip download of {LAC_REQUIREMENT} failed: {exc.stderr[-2000:]}") from exc
    finally:
        Path(constraint).unlink(missing_ok=True)
    if not target.is_file():
        raise FileNotFoundError(f"pip did not write {target}")
    return target


def _dic(raw: bytes) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in raw.decode("utf-8").split("\n"):
        idx, sep, word = line.partition("\t")
        if sep:
            out.setdefault(word, int(idx))
    return out


@dataclass(frozen=True)
class LacTable:
    vectors: np.ndarray  # (58224, 128) float32
    words: dict[str, int]
    q2b: dict[str, str]


def read_sdist(path: Path) -> LacTable:
    with tarfile.open(path) as tar:
        raw = tar.extractfile(EMB_MEMBER).read()  # type: ignore[union-attr]
        words = _dic(tar.extractfile(DIC_MEMBER).read())  # type: ignore[union-attr]
        q2b_raw = tar.extractfile(Q2B_MEMBER).read().decode("utf-8")  # type: ignore[union-attr]
    expected = HEADER_BYTES + LAC_ROWS * LAC_DIM * 4
    if len(raw) != expected:
        raise ValueError(f"{EMB_MEMBER}: {len(raw)} bytes, expected {expected}")
    vectors = np.frombuffer(raw[HEADER_BYTES:], dtype="<f4").reshape(LAC_ROWS, LAC_DIM).astype(np.float32)
    q2b = {}
    for line in q2b_raw.split("\n"):
        a, sep, b = line.partition("\t")
        if sep:
            q2b[a] = b
    return LacTable(vectors, words, q2b)


def lookup(table: LacTable, ch: str) -> Optional[int]:
    for form in (ch, table.q2b.get(ch, ch), unicodedata.normalize("NFKC", ch)):
        idx = table.words.get(form)
        if idx is not None:
            return idx
    return None


def char_table(table: LacTable, vocab: Vocab, hidden: int, rms: float = 0.1, seed: int = 0) -> tuple[np.ndarray, int]:
    """``(len(vocab), hidden)`` float32 initial embeddings and how many tokens LAC covered."""
    rng = np.random.default_rng(seed)
    std = float(table.vectors.std())
    out = rng.normal(0.0, std, (len(vocab), LAC_DIM)).astype(np.float32)
    covered = 0
    for i in vocab.char_ids:
        idx = lookup(table, vocab.tokens[i])
        if idx is not None:
            out[i] = table.vectors[idx]
            covered += 1
    if hidden != LAC_DIM:
        q, _ = np.linalg.qr(rng.normal(size=(max(hidden, LAC_DIM), LAC_DIM)))
        proj = q[:hidden] if hidden < LAC_DIM else q  # (hidden, 128) with orthonormal columns when hidden >= 128
        out = out @ proj.T.astype(np.float32)
    out *= rms / float(np.sqrt((out ** 2).mean()))
    return out.astype(np.float32), covered


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.extractor.lac_init", description=__doc__.splitlines()[0])
    ap.add_argument("--download", type=Path, required=True, help="folder for the sdist (reused when present)")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--rms", type=float, default=0.1)
    ap.add_argument("--vocab", type=Path, default=None, help="OCR dictionary (default: rapidocr_paddle's)")
    ap.add_argument("--out", type=Path, required=True, help="output .npz (table, covered)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    vocab = Vocab.from_ocr_dictionary(args.vocab)
    sdist = download_sdist(args.download)
    table, covered = char_table(read_sdist(sdist), vocab, args.hidden, args.rms)
    np.savez(args.out, table=table, covered=np.int64(covered))
    log.info("wrote %s: %s, LAC covers %d of %d characters", args.out, table.shape, covered, len(vocab.char_ids))
    sys.stdout.write(json.dumps({"out": str(args.out), "shape": list(table.shape), "covered": covered}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
