"""Choose the per-field hybrid policy (model, rules, agreement) on dev, from a ``docpipe eval`` report.

    docpipe eval DEV_DIR --config configs/model.yaml --limit N --json /tmp/dev_model.json
    python -m pipeline.tools.hybrid_policy /tmp/dev_model.json DEV_DIR --limit N --out configs/hybrid.yaml

The report must come from ``extraction.method: model``: then its ``model`` scores are the ERNIE-Layout
extractor alone and its ``rules_baseline`` the rules on the same OCR lines, and every wrong value of both is
listed. Per document and field this gives both extractors' values (a field not listed as wrong holds the
expected value), and each policy is simulated:

* ``model`` / ``rules``: that extractor's value, the other's when it found none;
* ``agreement``: the better of the two as above, but a document where both found a value and the values
  differ is sent to review (``extractors_disagree:<field>``).

A field takes ``model`` when model-first is right on more documents than rules-first (else ``rules``), and
``agreement`` on top when the disagreements it flags hold at least as many wrong values of the chosen
order as right ones (each flag catches an error more often than it sends a right document to review).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import yaml

from stages.extraction.field_specs import FIELD_KEYS

Values = dict[str, dict[str, Optional[str]]]  # document -> field -> value


@dataclass(frozen=True)
class FieldChoice:
    key: str
    policy: str
    model_first: int  # documents right with the model's value first
    rules_first: int
    flagged: int  # documents agreement would send to review for this field
    flagged_wrong: int  # ... of which the chosen order's value is wrong
    documents: int


def values_from_report(report: Mapping, truth: Mapping[str, Mapping[str, Optional[str]]]) -> tuple[Values, Values]:
    """``(model values, rules values)`` per document from an eval report and the documents' true fields."""
    def rebuild(errors: Sequence[Mapping]) -> Values:
        out = {doc: dict(fields) for doc, fields in truth.items()}
        for e in errors:
            if e["document"] in out:
                out[e["document"]][e["field"]] = e["got"]
        return out

    return rebuild(report["errors"]), rebuild(report["baseline_errors"])


def choose(
    truth: Mapping[str, Mapping[str, Optional[str]]], model: Values, rules: Values, keys: Sequence[str] = FIELD_KEYS
) -> list[FieldChoice]:
    out = []
    for key in keys:
        mf = rf = flagged = wrong_m = wrong_r = 0
        for doc, want in truth.items():
            gold = want.get(key)
            m, r = model[doc].get(key), rules[doc].get(key)
            by_model = m if m is not None else r
            by_rules = r if r is not None else m
            mf += by_model == gold
            rf += by_rules == gold
            if m is not None and r is not None and m != r:
                flagged += 1
                wrong_m += by_model != gold
                wrong_r += by_rules != gold
        policy = "model" if mf > rf else "rules"
        wrong = wrong_m if policy == "model" else wrong_r
        if flagged and 2 * wrong >= flagged:
            policy = "agreement" if policy == "rules" else policy
        out.append(FieldChoice(key, policy, mf, rf, flagged, wrong, len(truth)))
    return out


def _truth(directory: Path, limit: int) -> dict[str, dict[str, Optional[str]]]:
    from pipeline.tools.evaluate import find_documents

    docs = find_documents(directory)
    if limit:
        docs = docs[:limit]
    return {image.name: dict(t["fields"]) for image, t in docs}


def render(choices: Sequence[FieldChoice], source: str) -> str:
    lines = [
        "# Hybrid: the rules engine and the ERNIE-Layout extractor, per-field policy chosen on dev by",
        f"#   {source}",
        "# per field: documents right with model first / rules first; agreement flags (of which wrong)",
    ]
    for c in choices:
        lines.append(f"#   {c.key:<24} {c.policy:<9} model {c.model_first}/{c.documents}  rules {c.rules_first}/{c.documents}"
                     f"  flags {c.flagged} ({c.flagged_wrong} wrong)")
    body = {"extraction": {"method": "hybrid", "prefer": "rules", "policy": {c.key: c.policy for c in choices}}}
    return "\n".join(lines) + "\n" + yaml.safe_dump(body, sort_keys=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.tools.hybrid_policy", description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path, help="docpipe eval --json report of a method: model run on dev")
    ap.add_argument("dir", type=Path, help="the dev directory that report was made on")
    ap.add_argument("--limit", type=int, default=0, help="the --limit the report was made with")
    ap.add_argument("--out", type=Path, default=None, help="write the config here (default: stdout)")
    args = ap.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    truth = _truth(args.dir, args.limit)
    if len(truth) != report.get("documents"):
        sys.stderr.write(f"hybrid_policy: report has {report.get('documents')} documents, {args.dir} gives {len(truth)}\n")
        return 2
    model, rules = values_from_report(report, truth)
    text = render(choose(truth, model, rules), " ".join(["python -m pipeline.tools.hybrid_policy", *(argv or sys.argv[1:])]))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
