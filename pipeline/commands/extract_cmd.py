"""``docpipe extract FILE...``: one JSON result per file on stdout (a JSON array for several files)."""
from __future__ import annotations

import argparse
import json
import sys

from pipeline.ops.cli_common import load_config_or_say


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", help="images or PDFs")
    p.add_argument("--config", help="YAML config (see configs/)")
    p.add_argument("--compact", action="store_true", help="one line per result (JSON Lines)")


def run(args: argparse.Namespace) -> int:
    from pipeline.core.engine import Engine

    config = load_config_or_say(args.config, "docpipe")
    if config is None:
        return 2
    failed = 0
    results = []
    with Engine(config) as engine:
        for res in engine.extract_many(args.files):
            failed += bool(res["errors"])
            if args.compact:
                sys.stdout.write(json.dumps(res, ensure_ascii=False) + "\n")
                sys.stdout.flush()
            else:
                results.append(res)
    if not args.compact:
        out = results[0] if len(results) == 1 else results
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 1 if failed else 0
