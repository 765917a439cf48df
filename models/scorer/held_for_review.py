"""Why right documents go to review, from ``models.scorer.evaluate --json`` records: per configuration and draw, the
right documents a hard reason holds (counted by reason) and those the risk alone holds, with the fields that carry
that risk (those the routing names: the fewest, least certain first, whose removal brings the risk to the target;
``stages.extraction.routing.route``), grouped by whether the
value was shared with the rules, the decision's own, or an empty field, and by the capture of its page (``unknown``
where the records hold none: a configuration other than the learned decision).

    PYTHONPATH=$PWD python -m models.scorer.held_for_review EVAL.json [EVAL2.json ...] [--target 0.08] [--top 8]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from stages.extraction.routing import route


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

    def add(self, other: "Held") -> None:
        for name in ("documents", "right", "straight", "by_hard", "by_risk"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.hard.update(other.hard)
        self.carriers.update(other.carriers)
        self.fields.update(other.fields)

    def report(self, label: str, top: int) -> str:
        return (f"{label}: {self.documents} documents, {self.right} right: {self.straight} straight through, "
                f"{self.by_hard} held by a hard reason, {self.by_risk} by the risk alone\n"
                f"  hard: {dict(self.hard.most_common(top))}\n"
                f"  risk carried by: {dict(self.carriers.most_common(top))}\n"
                f"  fields: {dict(self.fields.most_common(top))}\n")


def risk_carriers(doc: Mapping[str, Any], samples: Mapping[tuple[str, str], Mapping[str, Any]], target: float
                  ) -> list[str]:
    """The fields the routing names for one document with no hard reason (``route``: the least certain first, until
    the fields left carry at most ``target``), each as ``kind:capture:field`` (kind: shared with the rules, own, or
    empty)."""
    routing = route(doc["confidence"], doc["absent_ok"], (), (), target)
    out = []
    for reason in routing.reasons:
        key = reason.split(":", 1)[1]
        s = samples.get((doc["doc"], key), {})
        if key in doc["absent_ok"]:
            out.append(f"empty:{s.get('document_capture') or 'unknown'}:{key}")
        elif key in doc["confidence"]:
            kind = "shared" if s.get("rules_agree") else "own"
            out.append(f"{kind}:{s.get('capture') or 'unknown'}:{key}")
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
            sys.stdout.write(h.report(label, args.top))
            total.add(h)
    sys.stdout.write(total.report("all", args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
