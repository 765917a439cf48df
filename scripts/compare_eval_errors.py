"""Compare the wrong-field lists of two ``docpipe eval --json`` reports: fields fixed, broken and changed.

    python scripts/compare_eval_errors.py BEFORE.json AFTER.json   # exit 0 when the lists are identical
"""
from __future__ import annotations

import json
import sys


def wrong_fields(path: str) -> dict[tuple[str, str], tuple]:
    rep = json.load(open(path, encoding="utf-8"))
    return {(e["document"], e["field"]): (e["expected"], e["got"]) for e in rep["errors"]}


def main(argv: list[str]) -> int:
    before, after = wrong_fields(argv[0]), wrong_fields(argv[1])
    fixed = sorted(set(before) - set(after))
    broken = sorted(set(after) - set(before))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    print(f"wrong fields: {len(before)} -> {len(after)}; fixed {len(fixed)}, broken {len(broken)}, "
          f"still wrong but different {len(changed)}")
    for label, keys, src in (("fixed", fixed, before), ("broken", broken, after), ("changed", changed, after)):
        for k in keys:
            print(f"  {label:<8}{k[0]:<22}{k[1]:<24}{src[k]}")
    return 0 if not (fixed or broken or changed) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
