"""Validator-aware decoding: the best span whose value validates; never a value that fails its validator."""
from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from stages.extraction.ernie_decode import decode_fields, span_candidates
from stages.extraction.ernie_features import LABELS
from stages.extraction.field_specs import FIELDS
from stages.postprocess.validate import validate_fields

TODAY = date(2026, 11, 30)
COL = {lab: i for i, lab in enumerate(LABELS)}


def _probs(n: int) -> np.ndarray:
    p = np.full((n, len(LABELS)), 1e-4)
    p[:, 0] = 1.0
    return p


def _tag(p: np.ndarray, key: str, s: int, e: int, strength: float = 0.9) -> None:
    p[s:e, 0] = np.minimum(p[s:e, 0], 0.1)
    p[s, COL[f"B-{key}"]] += strength
    p[s + 1 : e, COL[f"I-{key}"]] += strength


def _norm(p: np.ndarray) -> np.ndarray:
    return p / p.sum(-1, keepdims=True)


def test_span_score_is_the_per_event_geometric_mean() -> None:
    pb = np.array([0.1, 0.8, 0.05, 0.0])
    pi = np.array([0.0, 0.1, 0.9, 0.3])
    cands = {(s, e): pr for pr, s, e in span_candidates(pb, pi)}
    assert cands[(1, 3)] == pytest.approx((0.8 * 0.9 * (1 - 0.3)) ** (1 / 3))
    assert cands[(1, 2)] == pytest.approx((0.8 * (1 - 0.9)) ** (1 / 2))
    assert max(cands, key=cands.get) == (1, 3)


def test_a_long_value_is_not_beaten_by_its_first_character() -> None:
    n = 12
    pb = np.zeros(n)
    pi = np.zeros(n)
    pb[1] = 0.9
    pi[2:11] = 0.7  # a value the model is only fairly sure continues
    best = span_candidates(pb, pi)[0]
    assert best[1:] == (1, 11)


def test_takes_the_best_valid_span_not_the_best_span() -> None:
    text = "身份证号：11010519491231002X 备用：110105194912310021"
    p = _probs(len(text))
    bad = text.index("110105194912310021")  # wrong checksum digit, and the model's favourite
    good = text.index("11010519491231002X")
    _tag(p, "insured_id_number", bad, bad + 18, 0.95)
    _tag(p, "insured_id_number", good, good + 18, 0.6)
    got = decode_fields(text, _norm(p), LABELS, TODAY)
    assert got["insured_id_number"].value == "11010519491231002X"
    assert got["insured_id_number"].prob > 0


def test_cross_field_checks_move_to_the_next_candidate() -> None:
    text = "生效日期：2026年3月1日 满期日期：2025年3月1日 续保至2027年2月28日"
    p = _probs(len(text))
    s1 = text.index("2026年3月1日")
    s2 = text.index("2025年3月1日")
    s3 = text.index("2027年2月28日")
    _tag(p, "effective_date", s1, s1 + 9)
    _tag(p, "expiry_date", s2, s2 + 9, 0.9)
    _tag(p, "expiry_date", s3, s3 + 10, 0.5)
    got = decode_fields(text, _norm(p), LABELS, TODAY)
    assert got["effective_date"].value == "2026-03-01"
    assert got["expiry_date"].value == "2027-02-28"  # the more probable 2025 date would end before it starts


@pytest.mark.parametrize("seed", range(30))
def test_never_returns_a_value_failing_its_validator(seed: int) -> None:
    rng = np.random.default_rng(seed)
    alphabet = list("0123456789X年月日-/.,元万¥张王李保险人寿公司有限号码电话：") + [" "]
    text = "".join(rng.choice(alphabet, size=int(rng.integers(20, 160))))
    p = rng.dirichlet(np.full(len(LABELS), 0.3), size=len(text))
    got = decode_fields(text, p, LABELS, TODAY)
    for key, d in got.items():
        norm = FIELDS[key].normalizer(text[d.start : d.end], TODAY)
        assert norm.valid and norm.value == d.value and d.text == text[d.start : d.end]
        assert 0.0 < d.prob <= 1.0
    assert validate_fields({k: d.value for k, d in got.items()}, TODAY) == {}
