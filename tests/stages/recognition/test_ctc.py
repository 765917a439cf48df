"""CTC decoding: prefix beam search against brute force, greedy, charset constraint, CharDict."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

from stages.recognition.ctc import (
    CharDict,
    CTCResult,
    beam_search_topn,
    ctc_log_likelihood,
    greedy_decode,
    line_score,
    prefix_beam_search,
)
from tests.stages.recognition.ctc_reference import exhaustive_decode, exhaustive_label_probs

WIDE = 4096  # wider than the number of distinct prefixes of any small problem below


def dirichlet_probs(rng: np.random.Generator, t_len: int, n_cls: int, alpha: float = 1.0) -> np.ndarray:
    return rng.dirichlet(np.full(n_cls, alpha), size=t_len).astype(np.float32)


def peaked_probs(rng: np.random.Generator, t_len: int, n_cls: int, min_top: float) -> np.ndarray:
    """Every frame's largest probability is at least ``min_top``."""
    top = rng.uniform(min_top, 1.0, t_len)
    rest = rng.dirichlet(np.ones(n_cls - 1), size=t_len) * (1.0 - top)[:, None]
    out = np.empty((t_len, n_cls))
    best = rng.integers(0, n_cls, t_len)
    for t in range(t_len):
        out[t, best[t]] = top[t]
        out[t, np.arange(n_cls) != best[t]] = rest[t]
    return out.astype(np.float32)


def one_hot_probs(path: list[int], n_cls: int, p: float = 0.9) -> np.ndarray:
    out = np.full((len(path), n_cls), (1.0 - p) / (n_cls - 1), dtype=np.float32)
    out[np.arange(len(path)), path] = p
    return out


def small_cases(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        t_len = int(rng.integers(1, 7))
        n_cls = int(rng.integers(2, 5))
        alpha = float(rng.choice([0.3, 1.0, 3.0]))
        yield dirichlet_probs(rng, t_len, n_cls, alpha)


# ------------------------------------------------------------------------------------ exhaustive


def test_exhaustive_label_probs_sum_to_one():
    for probs in small_cases(30, seed=1):
        assert sum(exhaustive_label_probs(probs).values()) == pytest.approx(1.0, abs=1e-5)


def test_exhaustive_known_values():
    # two frames, classes {blank, a}: P(a) = pa1*pb2 + pb1*pa2 + pa1*pa2
    probs = np.array([[0.4, 0.6], [0.7, 0.3]], dtype=np.float32)
    table = exhaustive_label_probs(probs)
    assert table[()] == pytest.approx(0.28)
    assert table[(1,)] == pytest.approx(0.6 * 0.7 + 0.4 * 0.3 + 0.6 * 0.3)
    assert exhaustive_decode(probs) == ((1,), pytest.approx(0.72))


# ------------------------------------------------------------------------------- forward algorithm


def test_log_likelihood_equals_exhaustive_label_probs():
    checked = 0
    for probs in small_cases(40, seed=5):
        for labels, p in exhaustive_label_probs(probs).items():
            assert ctc_log_likelihood(probs, labels) == pytest.approx(math.log(p), abs=1e-5)
            checked += 1
    assert checked > 100


def test_log_likelihood_impossible_sequences():
    probs = np.array([[0.4, 0.6], [0.7, 0.3]], dtype=np.float32)
    assert ctc_log_likelihood(probs, (1, 1, 1)) == float("-inf")  # three labels in two frames
    assert ctc_log_likelihood(probs, (1, 1)) == float("-inf")  # a repeat needs a blank between: 3 frames
    assert ctc_log_likelihood(np.zeros((0, 2)), ()) == 0.0


# ---------------------------------------------------------------------------- beam vs exhaustive


def test_wide_beam_equals_exhaustive():
    n = 0
    for probs in small_cases(300, seed=2):
        labels, p = exhaustive_decode(probs)
        res = prefix_beam_search(probs, beam_width=WIDE, prune=0.0)
        assert res.labels == labels
        assert res.log_prob == pytest.approx(math.log(p), abs=1e-5)
        n += 1
    assert n >= 200


def test_wide_beam_equals_exhaustive_nonzero_blank():
    rng = np.random.default_rng(3)
    for _ in range(50):
        probs = dirichlet_probs(rng, int(rng.integers(1, 6)), 4)
        labels, p = exhaustive_decode(probs, blank=2)
        res = prefix_beam_search(probs, beam_width=WIDE, blank=2, prune=0.0)
        assert res.labels == labels
        assert res.log_prob == pytest.approx(math.log(p), abs=1e-5)


def test_wide_beam_with_charset_equals_constrained_exhaustive():
    rng = np.random.default_rng(4)
    for _ in range(100):
        probs = dirichlet_probs(rng, int(rng.integers(1, 7)), 5)
        allowed = {int(c) for c in rng.choice(np.arange(1, 5), size=int(rng.integers(0, 4)), replace=False)}
        labels, p = exhaustive_decode(probs, allowed=allowed)
        res = prefix_beam_search(probs, beam_width=WIDE, allowed=allowed, prune=0.0)
        assert res.labels == labels
        assert res.log_prob == pytest.approx(math.log(p), abs=1e-5)


def test_topn_matches_exhaustive_ranking():
    for probs in small_cases(60, seed=5):
        table = exhaustive_label_probs(probs)
        ranked = sorted(table.items(), key=lambda kv: kv[1], reverse=True)
        top = beam_search_topn(probs, n=4, beam_width=WIDE, prune=0.0)
        assert len(top) == min(4, len(ranked))
        for res, (labels, p) in zip(top, ranked):
            assert res.prob == pytest.approx(p, abs=1e-6)
            assert table[res.labels] == pytest.approx(res.prob, abs=1e-6)


# ------------------------------------------------------------------------------------ properties


def test_topn_distinct_and_sorted():
    rng = np.random.default_rng(6)
    for _ in range(30):
        probs = dirichlet_probs(rng, 20, 12, alpha=0.5)
        top = beam_search_topn(probs, n=8, beam_width=10)
        assert len({r.labels for r in top}) == len(top) == 8
        lps = [r.log_prob for r in top]
        assert lps == sorted(lps, reverse=True)
        assert top[0] == prefix_beam_search(probs, beam_width=10)


def test_char_frames_increasing_and_in_range():
    rng = np.random.default_rng(7)
    for _ in range(40):
        t_len = int(rng.integers(1, 60))
        probs = dirichlet_probs(rng, t_len, 8, alpha=0.3)
        for res in [prefix_beam_search(probs), greedy_decode(probs), *beam_search_topn(probs, n=3)]:
            frames = np.asarray(res.char_frames)
            assert len(res.char_frames) == len(res.char_probs) == len(res.labels)
            assert np.all((frames >= 0) & (frames < t_len))
            assert np.all(np.diff(frames) > 0)
            assert all(0.0 <= p <= 1.0 for p in res.char_probs)
            for lab, f, p in zip(res.labels, res.char_frames, res.char_probs):
                assert probs[f, lab] == pytest.approx(p)


def test_char_probs_peak_within_segment():
    # a a a _ b b with a peaking at frame 1 and b at frame 5
    probs = np.array(
        [[0.1, 0.8, 0.1], [0.05, 0.9, 0.05], [0.2, 0.7, 0.1], [0.9, 0.05, 0.05], [0.1, 0.1, 0.8], [0.02, 0.03, 0.95]],
        dtype=np.float32,
    )
    for res in (greedy_decode(probs), prefix_beam_search(probs)):
        assert res.labels == (1, 2)
        assert res.char_frames == (1, 5)
        assert res.char_probs == pytest.approx((0.9, 0.95))
        assert line_score(res) == pytest.approx(0.925)


def test_repeated_characters():
    n_cls = 3
    cases = {
        (1, 0, 1): (1, 1),  # a blank a -> aa
        (1, 1): (1,),  # a a -> a
        (1, 1, 0, 0, 1, 1): (1, 1),
        (0, 1, 2, 1, 0): (1, 2, 1),
        (2, 2, 2): (2,),
        (0, 0, 0): (),
    }
    for path, expected in cases.items():
        probs = one_hot_probs(list(path), n_cls, p=0.95)
        assert greedy_decode(probs).labels == expected
        assert prefix_beam_search(probs).labels == expected
        assert prefix_beam_search(probs, beam_width=1).labels == expected


def test_beam_width_one_equals_greedy_on_peaked_inputs():
    # Property documented in prefix_beam_search: equal when every frame's top probability > 1/sqrt(2).
    rng = np.random.default_rng(8)
    for _ in range(300):
        probs = peaked_probs(rng, int(rng.integers(1, 30)), int(rng.integers(2, 6)), min_top=0.72)
        g = greedy_decode(probs)
        b = prefix_beam_search(probs, beam_width=1, prune=0.0)
        assert b.labels == g.labels
        assert b.char_frames == g.char_frames


def test_beam_width_one_is_not_greedy_in_general():
    # The counterexample from the docstring: greedy path a a _ a -> "aa", merged prefix "a" is more probable.
    probs = np.array([[0.4, 0.6], [0.4, 0.6], [0.6, 0.4], [0.4, 0.6]], dtype=np.float32)
    assert greedy_decode(probs).labels == (1, 1)
    assert prefix_beam_search(probs, beam_width=1).labels == (1,)
    table = exhaustive_label_probs(probs)
    assert table[(1,)] > table[(1, 1)]


def test_greedy_log_prob_is_best_path():
    rng = np.random.default_rng(9)
    probs = dirichlet_probs(rng, 7, 5)
    g = greedy_decode(probs)
    assert g.log_prob == pytest.approx(float(np.log(probs.max(axis=1).astype(np.float64)).sum()), rel=1e-6)
    # a path probability never exceeds the label sequence probability
    assert g.prob <= exhaustive_label_probs(probs)[g.labels] + 1e-9


def test_charset_never_emits_outside_set():
    rng = np.random.default_rng(10)
    for _ in range(100):
        n_cls = int(rng.integers(3, 40))
        probs = dirichlet_probs(rng, int(rng.integers(1, 40)), n_cls, alpha=0.2)
        allowed = rng.choice(np.arange(1, n_cls), size=int(rng.integers(1, n_cls)), replace=False)
        for res in [
            prefix_beam_search(probs, beam_width=3, allowed=allowed),
            *beam_search_topn(probs, n=3, allowed=set(allowed.tolist()), prune=1e-2),
        ]:
            assert set(res.labels) <= set(allowed.tolist())


def test_charset_considers_classes_below_prune():
    # The model is sure of class 5 (forbidden); permitted 1 and 2 both far below prune.
    probs = np.full((3, 6), 1e-9, dtype=np.float32)
    probs[:, 5] = 1.0 - 5e-7
    probs[:, 0] = 1e-7
    probs[1, 1], probs[1, 2] = 3e-7, 2e-7
    res = prefix_beam_search(probs, allowed=[1, 2], prune=1e-4)
    assert res.labels == (1,)
    assert prefix_beam_search(probs, allowed=[2], prune=1e-4).labels == (2,)
    assert prefix_beam_search(probs, prune=1e-4).labels == (5,)
    # empty charset: only the blank may be emitted
    assert prefix_beam_search(probs, allowed=[]).labels == ()


def ctc_forward_log_prob(probs: np.ndarray, labels: tuple[int, ...], blank: int = 0) -> float:
    """log P(labels | probs) by the CTC forward recursion in log space (independent reference)."""
    ext = [blank]
    for lab in labels:
        ext += [lab, blank]
    logp = np.log(probs.astype(np.float64))
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = logp[0, ext[0]]
    if len(ext) > 1:
        alpha[1] = logp[0, ext[1]]
    for t in range(1, len(probs)):
        prev = alpha.copy()
        for s in range(len(ext)):
            terms = [prev[s]]
            if s >= 1:
                terms.append(prev[s - 1])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(prev[s - 2])
            alpha[s] = np.logaddexp.reduce(terms) + logp[t, ext[s]]
    return float(np.logaddexp(alpha[-1], alpha[-2]) if len(ext) > 1 else alpha[-1])


def test_long_lines_numerically_stable():
    rng = np.random.default_rng(11)
    probs = peaked_probs(rng, 200, 6, min_top=0.9)  # every path below ~1e-4, most far below 1e-100
    gaps = []
    for width in (4, 32, 256):
        res = prefix_beam_search(probs, beam_width=width, prune=0.0)
        assert np.isfinite(res.log_prob)
        ref = ctc_forward_log_prob(probs, res.labels)
        # the beam sums the alignments it kept: a lower bound that tightens as the beam widens
        assert res.log_prob <= ref + 1e-6
        gaps.append(ref - res.log_prob)
    assert gaps[-1] < 0.05 and gaps[-1] <= gaps[0]
    flat = np.full((200, 4), 0.25, dtype=np.float32)  # every path has probability 4**-200 ~ 1e-120
    assert np.isfinite(prefix_beam_search(flat).log_prob)


def test_empty_input():
    res = prefix_beam_search(np.zeros((0, 5), dtype=np.float32))
    assert res == CTCResult((), 0.0, (), ())
    assert greedy_decode(np.zeros((0, 5), dtype=np.float32)).labels == ()
    assert line_score(res) == 0.0


def test_speed_smoke():
    """16 lines, T=40, C=6625, beam 5 (timing is logged, not asserted)."""
    rng = np.random.default_rng(12)
    t_len, n_cls = 40, 6625
    lines = []
    for _ in range(16):
        logits = rng.normal(0.0, 1.0, (t_len, n_cls)).astype(np.float32)
        top = np.where(rng.random(t_len) < 0.5, 0, rng.integers(1, n_cls, t_len))
        logits[np.arange(t_len), top] += 16.0
        for _ in range(2):  # a couple of confusable classes per frame
            logits[np.arange(t_len), rng.integers(1, n_cls, t_len)] += rng.uniform(8.0, 12.0, t_len)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        lines.append((e / e.sum(axis=1, keepdims=True)).astype(np.float32))
    start = time.perf_counter()
    results = [prefix_beam_search(p, beam_width=5) for p in lines]
    elapsed_ms = (time.perf_counter() - start) * 1000.0
    print(f"prefix beam search: 16 lines T=40 C=6625 beam 5: {elapsed_ms:.1f} ms")
    assert all(r.labels == greedy_decode(p).labels for r, p in zip(results, lines))


# -------------------------------------------------------------------------------------- CharDict


def test_chardict_from_file(tmp_path):
    path = tmp_path / "keys.txt"
    path.write_text("a\n \n中\r\nB\n", encoding="utf-8")
    cd = CharDict.from_file(path, use_space_char=True)
    assert cd.chars == ("", "a", " ", "中", "B", " ")
    assert cd.num_classes == 6
    assert cd.decode([1, 3, 4, 5]) == "a中B "
    assert cd.encode_charset("B中?a").tolist() == [1, 3, 4]
    assert cd.encode_charset(" ").tolist() == [2, 5]  # every index of a character
    assert CharDict.from_file(path, use_space_char=False).num_classes == 5
    with pytest.raises(ValueError):
        cd.decode([6])


def test_chardict_ppocr_layout():
    chars = [chr(0x4E00 + i) for i in range(6623)]
    cd = CharDict.from_chars(chars, use_space_char=True)
    assert cd.num_classes == 6625
    assert cd.chars[6624] == " "
    assert cd.decode([1, 6624]) == "一 "
    assert hash(cd) == hash(CharDict.from_chars(chars))
