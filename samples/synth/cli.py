"""``docpipe synth OUT_DIR --n N --seed S --split train|dev|test [--workers K] [--long-side PX] [--variants V,...]``

Also runnable as ``python -m samples.synth.cli OUT_DIR ...``.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from samples.synth.corpus import iter_write
from samples.synth.fonts import DEV_ONLY_FACES, FontMissing, check_faces
from samples.synth.few_shot import FEW_SHOT_FAMILIES
from samples.synth.layouts import RENDERERS
from samples.synth.wordings import WordingsError, load_wordings
from samples.synth.splits import SPLITS
from samples.synth.variants import VARIANTS

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out_dir", metavar="OUT_DIR", help="output folder (created if missing)")
    parser.add_argument("--n", type=int, required=True, help="number of documents")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--split", choices=SPLITS, default="train", help="train, dev or test (test holds out "
                        "layout families, fonts, label synonyms and degradations never used in train/dev)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: CPU count)")
    parser.add_argument("--long-side", type=int, default=1400, help="page height in pixels (default 1400)")
    parser.add_argument("--start", type=int, default=0, help="first document index (default 0)")
    parser.add_argument("--variants", default=None, help=f"comma-separated real-world variants drawn per document "
                        f"from {', '.join(VARIANTS)} (default: plain scans, no variant recorded); each document "
                        "records its variant in the ground truth")
    parser.add_argument("--layouts", default=None, help="comma-separated layout families, taken in turn per document "
                        f"(default: drawn per split); the few-shot families {', '.join(FEW_SHOT_FAMILIES)} are only "
                        "generated when named here")
    parser.add_argument("--wordings", default=None, metavar="YAML", help="dev only: print some field labels in "
                        "the withheld wordings this file lists per field (configs/withheld_wordings.yaml)")
    parser.add_argument("--fonts", default=None, metavar="FACES", help="dev only: comma-separated typefaces no split "
                        f"draws, one drawn per document ({', '.join(DEV_ONLY_FACES)})")


def run(args: argparse.Namespace) -> int:
    if args.n < 0 or args.long_side < 200:
        print("synth: --n must be >= 0 and --long-side >= 200", file=sys.stderr)
        return 2
    fonts = tuple(f.strip() for f in args.fonts.split(",") if f.strip()) if args.fonts else ()
    if args.fonts is not None and (args.split != "dev" or not fonts or any(f not in DEV_ONLY_FACES for f in fonts)):
        print(f"synth: --fonts is for --split dev only, a comma-separated list of {', '.join(DEV_ONLY_FACES)}",
              file=sys.stderr)
        return 2
    try:
        check_faces()
        if fonts:
            check_faces(fonts)
    except FontMissing as exc:
        print(f"synth: {exc}", file=sys.stderr)
        return 1
    variants = tuple(v.strip() for v in args.variants.split(",") if v.strip()) if args.variants else None
    if variants is not None and (not variants or any(v not in VARIANTS for v in variants)):
        print(f"synth: --variants must be a comma-separated list of {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    layouts = tuple(v.strip() for v in args.layouts.split(",") if v.strip()) if args.layouts else None
    if layouts is not None and (not layouts or any(v not in RENDERERS for v in layouts)):
        print(f"synth: --layouts must be a comma-separated list of {', '.join(RENDERERS)}", file=sys.stderr)
        return 2
    wordings = None
    if args.wordings is not None:
        if args.split != "dev":
            print("synth: --wordings is for --split dev only", file=sys.stderr)
            return 2
        try:
            wordings = load_wordings(args.wordings)
        except WordingsError as exc:
            print(f"synth: {exc}", file=sys.stderr)
            return 2
    workers = args.workers or os.cpu_count() or 1
    started = time.perf_counter()
    count = 0
    families: dict[str, int] = {}
    step = max(1, args.n // 20)
    kinds: dict[str, int] = {}
    for written in iter_write(args.out_dir, args.n, args.seed, args.split, workers, args.long_side, args.start,
                              variants=variants, layouts=layouts, wordings=wordings, fonts=fonts):
        count += 1
        families[written.layout] = families.get(written.layout, 0) + 1
        kinds[written.variant] = kinds.get(written.variant, 0) + 1
        if count % step == 0:
            log.info("%d/%d documents", count, args.n)
    elapsed = time.perf_counter() - started
    mix = ", ".join(f"{k}={v}" for k, v in sorted(families.items()))
    if variants is not None:
        mix += "; variants: " + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items()))
    print(f"synth: wrote {count} {args.split} documents to {args.out_dir} in {elapsed:.1f}s "
          f"({workers} workers; {mix})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m samples.synth.cli", description=__doc__.splitlines()[0])
    add_arguments(parser)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
