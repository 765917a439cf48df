"""One joint assignment per document: at most one candidate per field, no character used by two fields, and the
cross-field constraints (issue <= effective < expiry, premium < sum insured, one valid ID number = one person),
maximising the sum of log P (log P(absent) for an empty field) by an exact branch and bound over each field's
top candidates."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

from stages.extraction.learned.candidates import Candidate

TOP_K = 5  # candidates per field the search considers (distinct value and span), besides "no value"
MAX_NODES = 200_000  # search nodes before the best assignment found so far is taken
_EPS = 1e-6


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    p: float  # the scorer's P(candidate is the field's value)


def _attr(key: str) -> str:
    return key.split("_", 1)[1] if key.startswith(("policyholder_", "insured_")) else key


def may_share_span(a: str, b: str) -> bool:
    """The policyholder's and the insured's same attribute may be one printed value (投保人/被保险人: 张三)."""
    return {a.split("_", 1)[0], b.split("_", 1)[0]} == {"policyholder", "insured"} and _attr(a) == _attr(b)


def _num(v: Optional[str]) -> Optional[float]:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def consistent(chosen: dict[str, Candidate]) -> bool:
    """Whether the chosen candidates can stand together (values that failed to normalize are not compared)."""
    v = {k: c.value for k, c in chosen.items()}
    issue, eff, exp = v.get("issue_date"), v.get("effective_date"), v.get("expiry_date")
    if issue and eff and issue > eff:
        return False
    if eff and exp and not eff < exp:
        return False
    if issue and exp and not issue < exp:
        return False
    prem, total = _num(v.get("premium")), _num(v.get("sum_insured"))
    if prem is not None and total is not None and not prem < total:
        return False
    ph_id, in_id = chosen.get("policyholder_id_number"), chosen.get("insured_id_number")
    if ph_id is not None and in_id is not None and ph_id.value and ph_id.value == in_id.value and not ph_id.issues:
        a, b = v.get("policyholder_name"), v.get("insured_name")
        if a and b and a != b:
            return False
    keys = list(chosen)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if not may_share_span(a, b) and chosen[a].span & chosen[b].span:
                return False
    return True


def _options(scored: Sequence[Scored]) -> dict[str, list[Scored]]:
    by_key: dict[str, dict[tuple, Scored]] = {}
    for s in scored:
        k = (s.candidate.value, s.candidate.chars)
        cur = by_key.setdefault(s.candidate.key, {}).get(k)
        if cur is None or s.p > cur.p:
            by_key[s.candidate.key][k] = s
    return {key: sorted(d.values(), key=lambda s: -s.p)[:TOP_K] for key, d in by_key.items()}


def assign(scored: Sequence[Scored]) -> dict[str, Optional[Scored]]:
    """The best consistent assignment: field -> chosen candidate (or None), for every field with a candidate."""
    options = _options(scored)
    keys = sorted(options, key=lambda k: -options[k][0].p)
    choices: list[list[tuple[float, Optional[Scored]]]] = []
    for k in keys:
        top = options[k][0].p
        row = [(math.log(max(_EPS, s.p)), s) for s in options[k]] + [(math.log(max(_EPS, 1.0 - top)), None)]
        choices.append(sorted(row, key=lambda t: -t[0]))
    bound = [0.0] * (len(keys) + 1)
    for i in range(len(keys) - 1, -1, -1):
        bound[i] = bound[i + 1] + choices[i][0][0]
    best_score, best = -math.inf, {k: None for k in keys}
    nodes = 0
    chosen: dict[str, Candidate] = {}
    picked: list[Optional[Scored]] = [None] * len(keys)

    def search(i: int, score: float) -> None:
        nonlocal best_score, best, nodes
        nodes += 1
        if score + bound[i] <= best_score or nodes > MAX_NODES:
            return
        if i == len(keys):
            best_score, best = score, dict(zip(keys, picked))
            return
        for s_log, s in choices[i]:
            if s is not None:
                chosen[keys[i]] = s.candidate
                if not consistent(chosen):
                    del chosen[keys[i]]
                    continue
            picked[i] = s
            search(i + 1, score + s_log)
            picked[i] = None
            chosen.pop(keys[i], None)

    search(0, 0.0)
    return best
