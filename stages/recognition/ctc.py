"""CTC decoding of per-line softmax matrices, pure NumPy.

A line's recognizer output is ``probs`` of shape (T, C): row ``t`` is the softmax over C classes at
frame ``t``; class ``blank`` (0 for PP-OCR) is the CTC blank.

* :func:`greedy_decode` - best path: argmax per frame, collapse repeats, drop blanks.
* :func:`prefix_beam_search` / :func:`beam_search_topn` - CTC prefix beam search: each hypothesis is
  a label *prefix* carrying the probability of all alignments that end in a blank (``p_b``) or in its
  last label (``p_nb``); alignments that collapse to the same prefix are merged. Optionally restricted
  to a set of permitted classes (charset constraint).
* :func:`ctc_log_likelihood` - the CTC forward algorithm: log P(a given label sequence | frames), summed
  over all its alignments (for scoring a lexicon's reading against what the recognizer saw).
* :class:`CharDict` - class index <-> character mapping of PP-OCR recognizers.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import numpy as np

logger = logging.getLogger(__name__)

__all__ = [
    "CTCResult",
    "CharDict",
    "beam_search_topn",
    "ctc_log_likelihood",
    "greedy_decode",
    "line_score",
    "prefix_beam_search",
]

Allowed = Optional[Union[Iterable[int], np.ndarray]]

# Per-character alignment info of a hypothesis, as a persistent linked list (shared tails, O(1) update):
# (parent node or None, label, peak probability, peak frame).
_Node = Optional[tuple]



@dataclass(frozen=True)
class CTCResult:
    """A decoded label sequence.

    ``log_prob``: natural log of the sequence probability (see the decoder for which probability).
    ``char_probs[i]``: the highest frame probability of label ``i`` within the frames it was emitted on
    (in the alignment that contributed most to the hypothesis). ``char_frames[i]``: the frame of that peak;
    strictly increasing, each in ``[0, T)``.
    """

    labels: tuple[int, ...]
    log_prob: float
    char_probs: tuple[float, ...]
    char_frames: tuple[int, ...]

    @property
    def prob(self) -> float:
        return math.exp(self.log_prob)


def line_score(result: CTCResult) -> float:
    """Mean of the per-character probabilities; 0.0 for an empty result."""
    if not result.char_probs:
        return 0.0
    return float(sum(result.char_probs) / len(result.char_probs))


def _check_probs(probs: np.ndarray, blank: int) -> np.ndarray:
    arr = np.asarray(probs)
    if arr.ndim != 2:
        raise ValueError(f"probs must be 2-D (T, C), got shape {arr.shape}")
    if not 0 <= blank < arr.shape[1]:
        raise ValueError(f"blank={blank} out of range for C={arr.shape[1]}")
    return arr


def _emission_classes(num_classes: int, blank: int, allowed: Allowed) -> Optional[np.ndarray]:
    """Sorted unique permitted non-blank classes, or None when unconstrained."""
    if allowed is None:
        return None
    raw = allowed if isinstance(allowed, np.ndarray) else list(allowed)
    cls = np.unique(np.asarray(raw, dtype=np.int64).ravel())
    if cls.size and (cls[0] < 0 or cls[-1] >= num_classes):
        raise ValueError(f"allowed classes must lie in [0, {num_classes})")
    return cls[cls != blank]


# --------------------------------------------------------------------------------------------- greedy


def greedy_decode(probs: np.ndarray, blank: int = 0) -> CTCResult:
    """Best-path decoding: argmax per frame, collapse runs, drop blanks.

    ``log_prob`` is the log probability of the best *path* (sum of the frames' max log probabilities),
    a lower bound on the probability of the decoded label sequence. For each character, ``char_probs``
    is the max probability over its run of frames and ``char_frames`` the frame of that maximum.
    """
    arr = _check_probs(probs, blank)
    t_len = arr.shape[0]
    if t_len == 0:
        return CTCResult((), 0.0, (), ())
    best = arr.argmax(axis=1)
    best_p = arr[np.arange(t_len), best].astype(np.float64)
    with np.errstate(divide="ignore"):
        log_prob = float(np.log(best_p).sum())
    run_start = np.ones(t_len, dtype=bool)
    run_start[1:] = best[1:] != best[:-1]
    starts = np.flatnonzero(run_start)
    run_label = best[starts]
    ends = np.append(starts[1:], t_len)
    keep = run_label != blank
    labels: list[int] = []
    cprobs: list[float] = []
    cframes: list[int] = []
    for s, e, lab in zip(starts[keep].tolist(), ends[keep].tolist(), run_label[keep].tolist()):
        seg = best_p[s:e]
        k = int(seg.argmax())
        labels.append(int(lab))
        cprobs.append(float(seg[k]))
        cframes.append(s + k)
    return CTCResult(tuple(labels), log_prob, tuple(cprobs), tuple(cframes))


# ---------------------------------------------------------------------------------------- beam search


def _nonzero_2d(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` for a 2-D mask, row-major; via the flat index (much faster for wide, sparse masks)."""
    flat = np.flatnonzero(mask)
    rows = flat // mask.shape[1]
    return rows, flat - rows * mask.shape[1]


def _frame_candidates(
    arr: np.ndarray, blank: int, emit: Optional[np.ndarray], prune: float
) -> tuple[list[int], list[list[int]], list[list[float]]]:
    """Per frame: blank probability, candidate classes and their probabilities (Python lists)."""
    t_len = arr.shape[0]
    rows = np.arange(t_len)
    blank_p = arr[:, blank].astype(np.float64)
    if emit is None:
        mask = arr >= prune
        mask[rows, arr.argmax(axis=1)] = True  # always the frame's best class
        mask[:, blank] = False  # the blank is handled separately
        t_idx, c_idx = _nonzero_2d(mask)
        vals = arr[t_idx, c_idx]
    else:
        if emit.size == 0:
            return blank_p.tolist(), [[] for _ in range(t_len)], [[] for _ in range(t_len)]
        sub = arr[:, emit]
        best_col = sub.argmax(axis=1)
        # Relative threshold: forbidden classes' mass must not starve the permitted ones.
        frame_max = np.maximum(sub[rows, best_col], arr[:, blank])
        mask = sub >= (prune * frame_max)[:, None]
        mask[rows, best_col] = True  # always the frame's best permitted class
        t_idx, j_idx = _nonzero_2d(mask)
        vals = sub[t_idx, j_idx]
        c_idx = emit[j_idx]
    bounds = np.searchsorted(t_idx, np.arange(t_len + 1)).tolist()
    c_list = c_idx.tolist()
    p_list = vals.astype(np.float64).tolist()
    cands = [c_list[bounds[t]:bounds[t + 1]] for t in range(t_len)]
    cprobs = [p_list[bounds[t]:bounds[t + 1]] for t in range(t_len)]
    return blank_p.tolist(), cands, cprobs


def _add(nxt: dict, key: tuple, pb: float, pnb: float, contrib: float, node: _Node) -> None:
    entry = nxt.get(key)
    if entry is None:
        nxt[key] = [pb, pnb, contrib, node]
        return
    entry[0] += pb
    entry[1] += pnb
    if contrib > entry[2]:
        entry[2] = contrib
        entry[3] = node


def _stay_repeat(nxt: dict, prefix: tuple, pnb: float, pc: float, node: _Node, t: int) -> None:
    """The same label again without a blank in between: collapses into the same prefix."""
    rep = pnb * pc
    if rep > 0.0:
        upd = (node[0], node[1], pc, t) if pc > node[2] else node
        _add(nxt, prefix, 0.0, rep, rep, upd)


def _unwind(node: _Node) -> tuple[tuple[float, ...], tuple[int, ...]]:
    cprobs: list[float] = []
    cframes: list[int] = []
    while node is not None:
        cprobs.append(node[2])
        cframes.append(node[3])
        node = node[0]
    return tuple(reversed(cprobs)), tuple(reversed(cframes))


def _prefix_search(
    probs: np.ndarray,
    beam_width: int,
    blank: int,
    allowed: Allowed,
    prune: float,
    max_candidates: Optional[int],
) -> list[CTCResult]:
    arr = _check_probs(probs, blank)
    if beam_width < 1:
        raise ValueError(f"beam_width must be >= 1, got {beam_width}")
    if prune < 0:
        raise ValueError(f"prune must be >= 0, got {prune}")
    emit = _emission_classes(arr.shape[1], blank, allowed)
    blank_p, cands, cprobs = _frame_candidates(arr, blank, emit, prune)
    if max_candidates is not None:
        cands, cprobs = _cap_candidates(cands, cprobs, max_candidates)

    # beam entries: (prefix, p_blank, p_nonblank, node); probabilities are rescaled per frame by the best
    # total and the scale is accumulated in log_scale, so nothing underflows for long lines.
    beams: list[tuple[tuple[int, ...], float, float, _Node]] = [((), 1.0, 0.0, None)]
    log_scale = 0.0
    for t in range(arr.shape[0]):
        pbl = blank_p[t]
        frame_c = cands[t]
        frame_p = cprobs[t]
        frame_set = set(frame_c)
        nxt: dict = {}
        for prefix, pb, pnb, node in beams:
            tot = pb + pnb
            stay = tot * pbl
            _add(nxt, prefix, stay, 0.0, stay, node)
            if not prefix:
                last = -1
            else:
                last = prefix[-1]
                if last not in frame_set and pnb > 0.0:
                    # the last label continuing, even when pruned from this frame's candidates
                    _stay_repeat(nxt, prefix, pnb, float(arr[t, last]), node, t)
            for c, pc in zip(frame_c, frame_p):
                if c == last:
                    _stay_repeat(nxt, prefix, pnb, pc, node, t)
                    ext = pb * pc  # a repeated label needs a blank in between
                else:
                    ext = tot * pc
                if ext > 0.0:
                    _add(nxt, prefix + (c,), 0.0, ext, ext, (node, c, pc, t))
        ranked = sorted(nxt.items(), key=lambda kv: kv[1][0] + kv[1][1], reverse=True)[:beam_width]
        top = ranked[0][1][0] + ranked[0][1][1]
        if top <= 0.0:
            logger.debug("prefix beam search: all hypotheses have zero probability at frame %d", t)
            return [CTCResult((), -math.inf, (), ())]
        inv = 1.0 / top
        log_scale += math.log(top)
        beams = [(k, v[0] * inv, v[1] * inv, v[3]) for k, v in ranked]

    out: list[CTCResult] = []
    for prefix, pb, pnb, node in beams:
        tot = pb + pnb
        lp = math.log(tot) + log_scale if tot > 0.0 else -math.inf
        cp, cf = _unwind(node)
        out.append(CTCResult(prefix, lp, cp, cf))
    return out


def _cap_candidates(
    cands: list[list[int]], cprobs: list[list[float]], k: int
) -> tuple[list[list[int]], list[list[float]]]:
    if k < 1:
        raise ValueError(f"max_candidates must be >= 1, got {k}")
    for t, (cs, ps) in enumerate(zip(cands, cprobs)):
        if len(cs) > k:
            order = np.argsort(-np.asarray(ps), kind="stable")[:k]
            order.sort()
            cands[t] = [cs[i] for i in order]
            cprobs[t] = [ps[i] for i in order]
    return cands, cprobs


def prefix_beam_search(
    probs: np.ndarray,
    beam_width: int = 5,
    blank: int = 0,
    allowed: Allowed = None,
    prune: float = 1e-4,
    *,
    max_candidates: Optional[int] = None,
) -> CTCResult:
    """CTC prefix beam search; returns the most probable prefix in the final beam.

    ``log_prob`` is the log of the total probability of the returned label sequence, summed over all
    alignments that the search kept (exact when nothing was pruned: wide beam and ``prune=0``).

    Candidate classes per frame (new labels a hypothesis may be extended with): those with probability
    >= ``prune`` plus always the frame's best class (``max_candidates`` optionally caps their number,
    keeping the most probable; off by default). The blank, and the continuation of a hypothesis' last
    label, are scored for every hypothesis whether pruned or not.

    ``allowed``: permitted classes; when given, nothing else (except the blank, which is always
    permitted) is ever emitted. The frame's best permitted class is then always considered and the
    threshold is relative: ``prune * max(best permitted, blank)`` at that frame, so permitted classes
    are still found when the model put nearly all mass on forbidden ones. Probabilities are not
    renormalised.

    Beam width 1 is a genuine width-1 prefix search, not a shortcut to :func:`greedy_decode`. The two are
    different decoders: greedy follows the single best *path*, the prefix search keeps the best *prefix*
    by merged probability, and e.g. frames (a .6, a .6, blank .6, a .6) give greedy ``aa`` but
    width-1 prefix search ``a``. They provably agree when every frame's largest probability exceeds
    1/sqrt(2) (~0.707), which the tests check on random peaked inputs.
    """
    return _prefix_search(probs, beam_width, blank, allowed, prune, max_candidates)[0]


def beam_search_topn(
    probs: np.ndarray,
    n: int = 5,
    beam_width: int = 5,
    blank: int = 0,
    allowed: Allowed = None,
    prune: float = 1e-4,
    *,
    max_candidates: Optional[int] = None,
) -> list[CTCResult]:
    """The ``n`` best distinct prefixes of a prefix beam search (width ``max(beam_width, n)``), most
    probable first. Same semantics as :func:`prefix_beam_search`; fewer than ``n`` when fewer exist."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return _prefix_search(probs, max(beam_width, n), blank, allowed, prune, max_candidates)[:n]


# --------------------------------------------------------------------------------------------- charset


def ctc_log_likelihood(probs: np.ndarray, labels: Sequence[int], blank: int = 0) -> float:
    """log P(``labels`` | ``probs``): the sum over every alignment of ``labels`` (blanks between and around,
    repeats collapsed) to the T frames of ``probs`` (T, C), by the forward recursion in log space.
    ``-inf`` when T frames cannot hold the sequence (a repeated label needs a blank between)."""
    p = np.asarray(probs, np.float64)
    if p.ndim != 2:
        raise ValueError(f"probs must be (T, C), got shape {p.shape}")
    t_len = p.shape[0]
    ext = [blank]
    for lab in labels:
        ext += [int(lab), blank]
    ext_arr = np.asarray(ext, np.int64)
    if t_len == 0:
        return 0.0 if not labels else float("-inf")
    with np.errstate(divide="ignore"):
        logp = np.log(np.clip(p[:, ext_arr], 0.0, None))
    s_len = len(ext)
    skip = np.zeros(s_len, bool)  # s may come from s-2: a label that differs from the label before it
    for s in range(3, s_len, 2):
        skip[s] = ext[s] != ext[s - 2]
    alpha = np.full(s_len, -np.inf)
    alpha[0] = logp[0, 0]
    if s_len > 1:
        alpha[1] = logp[0, 1]
    for t in range(1, t_len):
        prev1 = np.concatenate([[-np.inf], alpha])[:s_len]
        prev2 = np.where(skip, np.concatenate([[-np.inf, -np.inf], alpha])[:s_len], -np.inf)
        alpha = np.logaddexp(np.logaddexp(alpha, prev1), prev2) + logp[t]
    tail = alpha[-1] if s_len == 1 else np.logaddexp(alpha[-1], alpha[-2])
    return float(tail)


@dataclass(frozen=True)
class CharDict:
    """Class index <-> character for a PP-OCR recognizer.

    ``chars[0]`` is the blank (empty string); ``chars[i]`` for i >= 1 is line i of the dictionary file,
    followed by ``" "`` when built with ``use_space_char``. For ``ppocr_keys_v1.txt`` (6623 lines) this
    gives 6625 classes with index 6624 = ``" "``.
    """

    chars: tuple[str, ...]
    _index: dict = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.chars or self.chars[0] != "":
            raise ValueError("chars[0] must be the blank ('')")
        index: dict[str, list[int]] = {}
        for i, ch in enumerate(self.chars[1:], start=1):
            index.setdefault(ch, []).append(i)
        object.__setattr__(self, "_index", {ch: tuple(ix) for ch, ix in index.items()})

    @classmethod
    def from_chars(cls, chars: Iterable[str], use_space_char: bool = True) -> "CharDict":
        table = [""] + list(chars)
        if use_space_char:
            table.append(" ")
        return cls(tuple(table))

    @classmethod
    def from_file(cls, path: Union[str, Path], use_space_char: bool = True) -> "CharDict":
        """One character per line (UTF-8); only the line break is stripped, so a line holding a space
        stays a space. Splits on ``\\n`` only (``str.splitlines`` would also split on characters such as
        U+2028 that may themselves be dictionary entries)."""
        text = Path(path).read_text(encoding="utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return cls.from_chars((ln[:-1] if ln.endswith("\r") else ln for ln in lines), use_space_char)

    @property
    def num_classes(self) -> int:
        return len(self.chars)

    def decode(self, labels: Sequence[int]) -> str:
        n = len(self.chars)
        out = []
        for lab in labels:
            i = int(lab)
            if not 0 <= i < n:
                raise ValueError(f"class index {i} out of range [0, {n})")
            out.append(self.chars[i])
        return "".join(out)

    def encode_charset(self, chars: str) -> np.ndarray:
        """Sorted unique class indices of the given characters (all indices of a character listed more
        than once in the dictionary); characters not in the dictionary are ignored."""
        idx = sorted({i for ch in set(chars) for i in self._index.get(ch, ())})
        return np.asarray(idx, dtype=np.int64)
