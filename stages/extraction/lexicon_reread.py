"""Lexicon re-reading: a name's surname and an address's divisions re-read against what the recognizer saw.

A misread character can turn 吴 into 昊 or 鹿城区 into 厦城区: text no real policy holds. For the fields in
:data:`LEXICON_FIELDS`, the value's characters are compared with a lexicon (surnames.py, regions.py) and each
lexicon reading is scored by the CTC forward probability of the line's stored frames (``TextLine.frame_probs``):
a reading is taken only when the recognizer itself found it plausible.

* Names read otherwise by the recognizer's check head (check_reading.py): its characters are taken when the frames
  make them at most :data:`CHECK_MAX_RATIO` times less probable; the surname re-reading then follows.
* Surnames: a first character that is not a common surname is replaced by the surname that maximises
  log P(frames | reading) + log prior(surname) when that beats the read character (a Bayes decision with
  coarse population priors).
* Product and insurer names: a kind of insurance or of company with one character misread (terms.py) is
  completed, and an opening bracket never closed gets its closing bracket, when the frames allow it.
* Addresses: when the start of the address is no valid province/city/county prefix but one is within a few
  substitutions, stray characters or one dropped inner character (regions.py), the likeliest such prefix is taken
  if the frames make it at most :data:`LEXICON_MAX_RATIO` times less probable than what was read.
"""
from __future__ import annotations

import logging
import math
from typing import Callable, Optional, Sequence

import numpy as np

from stages.contracts.types import TextLine
from stages.extraction.check_reading import CHECKED, Ref, check_span
from stages.extraction.field_specs import FIELDS
from stages.postprocess import regions, surnames, terms
from stages.postprocess.values import STATUTORY, normalize_beneficiary
from stages.postprocess.regions import Edit
from stages.recognition.ctc import CharDict, ctc_log_likelihood

log = logging.getLogger(__name__)

MISSING_PROB = 1e-4  # per-frame probability of a class the line did not store (it never reached keep_min_prob)
LEXICON_MAX_RATIO = 1e3
# the check head's reading of a name is taken when the frames make it at most this many times less probable (an order
# of magnitude: on dev the characters it mended scored ratios up to 3.9, the 磊 it read 嘉 scored 12 to 15)
CHECK_MAX_RATIO = 10.0
MAX_NAME_FOR_LOST_SURNAME = 3  # a surname is looked for before names of at most this many characters (given ≤ 3)
_CJK = ("\u4e00", "\u9fff")


def segment_log_ratio(line: TextLine, c0: int, c1: int, new: str, chars: CharDict) -> Optional[float]:
    """log P(``new`` | frames of chars c0..c1) - log P(the read chars | the same frames); None without frames."""
    fp, span = line.frame_probs, line.frame_span(c0, c1)
    if fp is None or span is None:
        return None
    start, end = span
    columns = {int(c): j for j, c in enumerate(fp.columns)}
    probs = fp.probs[start:end]
    extra: list[int] = []

    def labels(text: str) -> list[int]:
        out = []
        for ch in text:
            ids = chars.encode_charset(ch)
            cls = int(ids[0]) if ids.size else -1
            if cls not in columns:
                columns[cls] = len(fp.columns) + len(extra)
                extra.append(cls)
            out.append(columns[cls])
        return out

    read_labels, new_labels = labels(line.text[c0 : c1 + 1]), labels(new)
    if extra:
        probs = np.concatenate([probs, np.full((probs.shape[0], len(extra)), MISSING_PROB, probs.dtype)], axis=1)
    return ctc_log_likelihood(probs, new_labels) - ctc_log_likelihood(probs, read_labels)


def edits_log_ratio(refs: Sequence[Ref], edits: Sequence[Edit], lines: Sequence[Sequence[TextLine]],
                    chars: CharDict) -> Optional[float]:
    """How much more (log) probable the frames make the value with ``edits`` applied than as read, summed over
    the lines the edits touch; None when some line kept no frame probabilities."""
    by_line: dict[tuple[int, int], dict[int, Optional[str]]] = {}
    for i, ch in edits:
        p, li, ci = refs[i]
        by_line.setdefault((p, li), {})[ci] = ch
    total = 0.0
    for (p, li), changes in by_line.items():
        line = lines[p][li]
        # one character of context each side: deleting either of two equal characters scores the same
        c0, c1 = max(0, min(changes) - 1), min(len(line.text) - 1, max(changes) + 1)
        new = "".join(changes.get(ci, line.text[ci]) or "" for ci in range(c0, c1 + 1))
        r = segment_log_ratio(line, c0, c1, new, chars)
        if r is None:
            return None
        total += r
    return total


def _is_cjk(ch: str) -> bool:
    return _CJK[0] <= ch <= _CJK[1]


def _name_prior(surname: str, given: int) -> float:
    """A name's coarse log-prior: its shape (surnames.log_name_prior) and :data:`surnames.LOG_GIVEN_CHAR` for
    each of its ``given`` given-name characters."""
    return surnames.log_name_prior(surname, given) + given * surnames.LOG_GIVEN_CHAR


def reread_surname(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]],
                   chars: CharDict) -> Optional[tuple[Edit, ...]]:
    """The edit that gives a personal name a likelier surname, or None to keep it as read: where the read first
    character is no common surname, each listed surname the frames hold, in its place or before it, by
    log P(frames | reading) + the name's coarse prior (its surname, the length of its given name and
    :data:`surnames.LOG_GIVEN_CHAR` per given-name character) against the name as read."""
    if not 2 <= len(text) <= 4 or not all(_is_cjk(ch) for ch in text):
        return None
    surname, _ = surnames.split_surname(text)
    if len(surname) != 1:
        return None
    p, li, _ = refs[0]
    fp = lines[p][li].frame_probs
    if fp is None:
        return None
    seen = {chars.chars[int(c)] for c in fp.columns if 0 < int(c) < len(chars.chars)}
    compound = _reread_compound(text, refs, lines, chars, seen)
    if compound is not None or surname in surnames.COMMON:
        return compound
    given = len(text) - 1
    read = _name_prior(surname, given)
    best: tuple[float, Optional[str]] = (0.0, None)
    for alt in sorted(seen & surnames.listed()):
        if len(alt) != 1 or alt == surname:
            continue
        # the read first character misread for the surname (昊帆瑞 → 吴帆瑞), or the surname lost before it and the
        # read character the given name's first (杰刚 → 雷杰刚: the recognizer's frames hold 雷 before 杰)
        options = [(alt, _name_prior(alt, given))]
        if len(text) <= MAX_NAME_FOR_LOST_SURNAME:
            options.append((alt + text[0], _name_prior(alt, given + 1)))
        for new, prior in options:
            ratio = edits_log_ratio(refs, ((0, new),), lines, chars)
            if ratio is None:
                return None
            gain = ratio + prior - read
            if gain > best[0]:
                best = (gain, new)
    return ((0, best[1]),) if best[1] is not None else None


def _reread_compound(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]], chars: CharDict,
                     seen: set[str]) -> Optional[tuple[Edit, ...]]:
    """The edit that makes a name's first two characters a compound surname (申居坤 → 申屠坤, 欧用明 → 欧阳明):
    the surname 申 with the given name 居坤 against the surname 申屠 with the given name 坤, each with its
    coarse prior (surnames.log_name_prior; the character given up counts :data:`surnames.LOG_GIVEN_CHAR`),
    decided by the frames of the second character. None when no compound reading wins."""
    if not 3 <= len(text) <= 4:
        return None
    read = surnames.log_name_prior(text[0], len(text) - 1) + surnames.LOG_GIVEN_CHAR
    best: tuple[float, Optional[str]] = (0.0, None)
    for alt in sorted(c for c in surnames.compound() if c[0] == text[0] and c[1] != text[1] and c[1] in seen):
        ratio = edits_log_ratio(refs, ((1, alt[1]),), lines, chars)
        if ratio is None:
            return None
        gain = ratio + surnames.log_name_prior(alt, len(text) - 2) - read
        if gain > best[0]:
            best = (gain, alt[1])
    return ((1, best[1]),) if best[1] is not None else None


def reread_address(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]],
                   chars: CharDict) -> Optional[tuple[Edit, ...]]:
    """The edits that make the address start with a valid division prefix, or None to keep it as read."""
    found = regions.readings(text)
    if found and found[0].cost == 0:
        return None
    head = regions.lost_province_head(text)
    if head is not None:  # a province's first character(s) lost, its city read (苏省无锡市): no frames to ask
        return ((0, head + text[0]),)
    if not found:
        return None
    best: tuple[float, Optional[tuple[Edit, ...]]] = (-math.log(LEXICON_MAX_RATIO), None)
    for r in found:
        ratio = edits_log_ratio(refs, r.edits, lines, chars)
        log.debug("address division reading with %d edit(s): log ratio %s", r.cost, ratio)
        if ratio is not None and ratio >= best[0]:
            best = (ratio, r.edits)
    return best[1]


def _plausible(refs: Sequence[Ref], edits: Sequence[Edit], lines: Sequence[Sequence[TextLine]], chars: CharDict,
               max_ratio: float = LEXICON_MAX_RATIO) -> bool:
    """Whether the frames make the value with ``edits`` at most ``max_ratio`` times less probable than as read."""
    ratio = edits_log_ratio(refs, edits, lines, chars)
    return ratio is not None and ratio >= -math.log(max_ratio)


def _reread_terms(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]], chars: CharDict,
                  vocabulary: tuple[str, ...]) -> dict[int, Optional[str]]:
    """Substitutions that complete the vocabulary's terms (terms.py), each kept when the frames allow it within
    :data:`LEXICON_MAX_RATIO`; repeated (at most three rounds) since one repair can bring a longer term in reach."""
    changes: dict[int, Optional[str]] = {}
    current = text
    for _ in range(3):
        found = [e for e in terms.near_terms(current, vocabulary) if _plausible(refs, e, lines, chars)]
        if not found:
            break
        for edit in found:
            changes.update(edit)
        current, _ = apply_edits(text, refs, tuple(changes.items()))
    return changes


def reread_product(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]],
                   chars: CharDict) -> Optional[tuple[Edit, ...]]:
    """A product name's kinds of insurance completed (重人疾病保险 → 重大疾病保险) and a last opening bracket that is
    never closed (``…保险(经典版``, the qualifier ending in a word) closed after the last character, each when the
    frames make it at most :data:`LEXICON_MAX_RATIO` times less probable than the reading: a thin ``)`` at a line's
    end is what a coarse scan loses first."""
    changes = _reread_terms(text, refs, lines, chars, terms.PRODUCT_TERMS)
    now, _ = apply_edits(text, refs, tuple(changes.items()))
    start = max(now.rfind("("), now.rfind("（"))
    if start >= 0 and len(now) - start >= 3 and not any(c in now[start:] for c in ")）") and _is_cjk(now[-1]):
        close = ((len(text) - 1, now[-1] + (")" if now[start] == "(" else "）")),)
        if _plausible(refs, close, lines, chars):  # a qualifier cut short (``(20``) is left for a person to see
            changes.update(close)
    return tuple(sorted(changes.items())) or None


def reread_insurer(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]],
                   chars: CharDict) -> Optional[tuple[Edit, ...]]:
    """An insurer's kind of company completed (养客保险股份有限公司 → 养老保险股份有限公司) where the frames allow it."""
    return tuple(sorted(_reread_terms(text, refs, lines, chars, terms.INSURER_TERMS).items())) or None


def reread_beneficiary(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]],
                       chars: CharDict) -> Optional[tuple[Edit, ...]]:
    """A named beneficiary's surname re-read; the statutory heirs (法定, 法定继承人, ...) are no name."""
    if normalize_beneficiary(text).value == STATUTORY:
        return None
    return reread_surname(text, refs, lines, chars)


Reread = Callable[[str, Sequence[Ref], Sequence[Sequence[TextLine]], CharDict], Optional[tuple[Edit, ...]]]

LEXICON_FIELDS: dict[str, Reread] = {
    "insurer": reread_insurer,
    "product_name": reread_product,
    "policyholder_name": reread_surname,
    "insured_name": reread_surname,
    "beneficiary_name": reread_beneficiary,
    "policyholder_address": reread_address,
}


ISSUE_SURNAME = "surname_unknown"  # a personal name whose first character(s) are no listed surname


def lexicon_issues(key: str, value: Optional[str]) -> tuple[str, ...]:
    """Validation by the lexicons, after re-reading: a name whose surname is in no list (被保险人, 联系电话: a
    label or stray words read as a name, or a surname re-reading could not repair) is :data:`ISSUE_SURNAME`."""
    if key not in FIELDS or FIELDS[key].kind not in ("name", "beneficiary") or not value or value == STATUTORY or not all(_is_cjk(ch) for ch in value):
        return ()
    surname, _ = surnames.split_surname(value)
    return () if surname in surnames.listed() else (ISSUE_SURNAME,)


def apply_edits(text: str, refs: Sequence[Ref], edits: Sequence[Edit]) -> tuple[str, tuple[Ref, ...]]:
    """``text`` and its character references with the substitutions and deletions applied."""
    change = dict(edits)
    out, kept = [], []
    for i, (ch, ref) in enumerate(zip(text, refs)):
        if i in change:
            if change[i] is None:
                continue
            ch = change[i]
        out.append(ch)
        kept.extend([ref] * len(ch))  # a replacement may add a character (a closing bracket): same place
    return "".join(out), tuple(kept)


def reread_checked(text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]],
                   chars: CharDict) -> Optional[tuple[Edit, ...]]:
    """The check head's characters in place of a name's (check_reading.py), or None to keep it as read: where the
    value lies on one line, the check head reads its span as as many Chinese characters, other ones, and the
    shipped head's own frames make that reading at most :data:`CHECK_MAX_RATIO` times less probable. Two readers
    that each saw the character, one of them sure and the other not far from it (睿 read as 容 at P 0.54 by the
    shipped head, as 睿 by the check head), decide it together."""
    if not text or not all(_is_cjk(ch) for ch in text) or len({(p, li) for p, li, _ in refs}) != 1:
        return None
    p, li, _ = refs[0]
    cis = [ci for _, _, ci in refs]
    if not (0 <= p < len(lines) and 0 <= li < len(lines[p])) or cis != list(range(cis[0], cis[0] + len(cis))):
        return None
    span = check_span(lines[p][li], cis[0], cis[-1])
    if span is None or len(span) != len(text) or span == text or not all(_is_cjk(ch) for ch in span):
        return None
    edits = tuple((i, b) for i, (a, b) in enumerate(zip(text, span)) if a != b)
    return edits if _plausible(refs, edits, lines, chars, CHECK_MAX_RATIO) else None


def reread(key: str, text: str, refs: Sequence[Ref], lines: Sequence[Sequence[TextLine]],
           chars: CharDict) -> Optional[tuple[str, tuple[Ref, ...]]]:
    """(text, refs) re-read by the check head (a name, :func:`reread_checked`), then by the field's lexicon, or None
    when the field has no lexicon or the read text stays."""
    fn = LEXICON_FIELDS.get(key)
    if fn is None or not text or len(text) != len(refs):
        return None
    checked = reread_checked(text, refs, lines, chars) if key in CHECKED else None
    now, now_refs = apply_edits(text, refs, checked) if checked else (text, tuple(refs))
    edits = fn(now, now_refs, lines, chars)
    if edits:
        return apply_edits(now, now_refs, edits)
    return (now, now_refs) if checked else None
