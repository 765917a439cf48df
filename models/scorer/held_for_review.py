"""Why right documents go to review, from ``models.scorer.evaluate --json`` records: per configuration and draw, the
right documents a hard reason holds (counted by reason) and those the risk alone holds, with the fields that carry
that risk (the fewest, least certain first, whose removal brings the risk to the target), grouped by whether the
value was shared with the rules, the decision's own, or an empty field, and by the capture of its page (``unknown``
where the records hold none: a configuration other than the learned decision).

    PYTHONPATH=$PWD python -m models.scorer.held_for_review EVAL.json [EVAL2.json ...] [--target 0.08] [--top 8]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence


@dataclass
class Held:
    """One label's count of right documents and why those not straight through were held."""

    documents: int = 0
    right: int = 0
    straight: int = 0  # right documents straight through
    by_hard: int = 0  # right documents a hard reason holds
    by_risk: int = 0  # right documents only the risk holds
    hard: Counter = field(default_factory=Counter)  # reason kind -> right documents
    carriers: Counter = field(default_factory=Counter)  # "shared|own|empty:capture" -> fields carrying held risk
    fields: Counter = field(default_factory=Counter)  # field -> times it carried held risk


def risk_carriers(doc: Mapping[str, Any], samples: Mapping[tuple[str, str], Mapping[str, Any]], target: float
                  ) -> list[str]:
    """The fields of one document whose removal, least certain first, brings its risk to ``target``, each as
    ``kind:capture:field`` (kind: shared with the rules, own, or empty)."""
    parts = []
    for key, conf in doc["confidence"].items():
        s = samples.get((doc["doc"], key), {})
        kind = "shared" if s.get("rules_agree") else "own"
        parts.append((-math.log(max(conf or 0.0, 1e-12)), f"{kind}:{s.get('capture') or 'unknown'}:{key}"))
    for key, ok in doc["absent_ok"].items():
        s = samples.get((doc["doc"], key), {})
        parts.append((-math.log(max(ok, 1e-12)), f"empty:{s.get('document_capture') or 'unknown'}:{key}"))
    parts.sort(reverse=True)
    budget, total, out = -math.log(1.0 - target), sum(v for v, _ in parts), []
    for v, name in parts:
        if total <= budget:
            break
        out.append(name)
        total -= v
    return out


def tally(documents: Sequence[Mapping[str, Any]], samples: Sequence[Mapping[str, Any]], target: float) -> Held:
    by_field = {(s["doc"], s["field"]): s for s in samples}
    h = Held(documents=len(documents))
    for d in documents:
        if not d["right"]:
            continue
        h.right += 1
        if d["hard_reasons"]:
            h.by_hard += 1
            h.hard.update({r.split(":", 1)[0] for r in d["hard_reasons"]})
        elif d.get("risk") is not None and d["risk"] > target:
            h.by_risk += 1
            for name in risk_carriers(d, by_field, target):
                kind, capture, key = name.split(":")
                h.carriers[f"{kind}:{capture}"] += 1
                h.fields[key] += 1
        else:
            h.straight += 1
    return h


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path, nargs="+", help="JSON(s) written by models.scorer.evaluate --json")
    ap.add_argument("--target", type=float, default=0.08, help="the risk target (review.max_document_error_rate)")
    ap.add_argument("--top", type=int, default=8, help="carriers and fields listed per label")
    args = ap.parse_args(argv)
    total = Held()
    for path in args.report:
        rep = json.loads(path.read_text(encoding="utf-8"))
        for label, docs in rep["documents"].items():
            if docs and "risk" not in docs[0]:
                raise SystemExit(f"{path}: no risk recorded; evaluate again with this tree's models.scorer.evaluate")
            h = tally(docs, rep["samples"][label], args.target)
            sys.stdout.write(f"{label}: {h.documents} documents, {h.right} right: {h.straight} straight through, "
                             f"{h.by_hard} held by a hard reason, {h.by_risk} by the risk alone\n"
                             f"  hard: {dict(h.hard.most_common(args.top))}\n"
                             f"  risk carried by: {dict(h.carriers.most_common(args.top))}\n"
                             f"  fields: {dict(h.fields.most_common(args.top))}\n")
            for name in ("documents", "right", "straight", "by_hard", "by_risk"):
                setattr(total, name, getattr(total, name) + getattr(h, name))
            total.hard.update(h.hard)
            total.carriers.update(h.carriers)
            total.fields.update(h.fields)
    sys.stdout.write(f"all: {total.documents} documents, {total.right} right: {total.straight} straight through, "
                     f"{total.by_hard} held by a hard reason, {total.by_risk} by the risk alone\n"
                     f"  hard: {dict(total.hard.most_common(args.top))}\n"
                     f"  risk carried by: {dict(total.carriers.most_common(args.top))}\n"
                     f"  fields: {dict(total.fields.most_common(args.top))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
