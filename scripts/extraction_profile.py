"""Where the extraction stage spends its time: cProfile of the default stage over cached OCR, per part, ms/page.

    PYTHONPATH=$PWD python scripts/extraction_profile.py data/ocr/dev5 30 [--config configs/default.yaml]

Reads an OCR cache (``python -m models.scorer.ocr_cache``) and runs the extraction stage of the config on one
warm-up document, then N documents unprofiled, then N others profiled (each pass on documents the stage has not
seen, as in a batch). Prints, per page, the time of the whole stage unprofiled and the cumulative profiled time
of its main parts (profiling slows them alike, so their shares are what to read).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

# (label, file suffix, function) of the parts reported; a part's time includes the parts it calls
PARTS = (
    ("stage", "stages/extraction/stage.py", "__call__"),
    ("rule decision (the strategies' candidates, best per field)", "stages/extraction/rules/extract.py", "_decide"),
    ("learned candidates and features", "stages/extraction/learned/extract.py", "document_candidates"),
    ("  rule candidates", "stages/extraction/learned/candidates.py", "rule_candidates"),
    ("  features", "stages/extraction/learned/features.py", "featurize"),
    ("ERNIE-Layout", "stages/extraction/learned/ernie_evidence.py", "run_extractor"),
    ("scorer and assignment", "stages/extraction/learned/extract.py", "decide"),
    ("rules' own fields", "stages/extraction/stage.py", "rules_candidates"),
    ("field assembler", "stages/extraction/assemble.py", "assemble"),
    ("  address re-reading", "stages/extraction/lexicon_reread.py", "reread_address"),
)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ocr", type=Path)
    ap.add_argument("n", type=int, nargs="?", default=30)
    ap.add_argument("--config", default="configs/default.yaml")
    args = ap.parse_args(argv)
    from models.scorer.ocr_cache import load_folder
    from models.scorer.train import char_dict
    from stages.contracts.config import load_config
    from stages.extraction.page_roles import RoleAwareFields
    from stages.extraction.stage import ExtractionStage

    stage = RoleAwareFields(ExtractionStage(load_config(args.config), char_dict()))
    docs = list(load_folder(args.ocr))[: 2 * args.n + 1]
    if len(docs) < 3:
        raise SystemExit(f"{args.ocr}: fewer than 3 cached documents")
    stage(docs[0].lines, docs[0].pages)
    plain_docs, profiled_docs = docs[1:args.n + 1], docs[args.n + 1:]
    t0 = time.perf_counter()
    for d in plain_docs:
        stage(d.lines, d.pages)
    plain = (time.perf_counter() - t0) * 1000 / sum(len(d.pages) for d in plain_docs)
    profile = cProfile.Profile()
    profile.enable()
    for d in profiled_docs:
        stage(d.lines, d.pages)
    profile.disable()
    pages = sum(len(d.pages) for d in profiled_docs)
    stats = pstats.Stats(profile).stats  # (file, line, function) -> (calls, primitive, tottime, cumtime, callers)
    parts = {}
    for label, suffix, func in PARTS:
        cum = sum(v[3] for (f, _, fn), v in stats.items() if fn == func and f.endswith(suffix))
        parts[label] = round(cum * 1000 / pages, 1)
    sys.stdout.write(json.dumps({"documents": [len(plain_docs), len(profiled_docs)],
                                 "stage_ms_per_page": round(plain, 1),
                                 "profiled_ms_per_page": parts}, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
