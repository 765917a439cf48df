"""One person, one name: when the policyholder's and the insured's ID numbers are the same valid number, the two
names are one name, read twice.

An ID number with a valid GB 11643 check character names one person, so a policy whose policyholder and insured
carry the same one insures the policyholder (本人), and the two name fields must agree. When they do not (宋涛 on
one line, 朱涛 on the other: a fax lost a stroke on one of them), both lines are two readings of the same name:
the name taken is the one the frames of both lines make likelier together, log P(frames₁ | name) + log P(frames₂ |
name), from the CTC probabilities each line stores (for two readings of the same length). When one of the two names was not found at all, the other
one fills it (as the rules do for 本人).
"""
from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Mapping, Optional, Sequence

from stages.contracts.types import TextLine
from stages.extraction.decisions import Decision, Proposal
from stages.extraction.field_specs import FIELDS
from stages.extraction.lexicon_reread import segment_log_ratio
from stages.extraction.strategies import COPY_OF_POLICYHOLDER
from stages.recognition.ctc import CharDict

PAIR = (("policyholder_id_number", "policyholder_name"), ("insured_id_number", "insured_name"))


def same_person(decisions: Mapping[str, Optional[Decision]], lines: Sequence[Sequence[TextLine]],
                chars: CharDict, today: date) -> dict[str, Optional[Decision]]:
    """``decisions`` with the two names made one where the two ID numbers are one (see the module)."""
    out = dict(decisions)
    ids = [decisions.get(k) for k, _ in PAIR]
    if any(d is None or not d.normalized.valid for d in ids) or ids[0].normalized.value != ids[1].normalized.value:  # type: ignore[union-attr]
        return out
    (_, key_a), (_, key_b) = PAIR
    a, b = decisions.get(key_a), decisions.get(key_b)
    a_ok, b_ok = _named(a), _named(b)
    if a_ok and not b_ok:
        out[key_b] = _copy(a, key_b, today)  # type: ignore[arg-type]
    elif b_ok and not a_ok:
        out[key_a] = _copy(b, key_a, today)  # type: ignore[arg-type]
    elif (a_ok and b_ok and a.normalized.value != b.normalized.value  # type: ignore[union-attr]
          and len(a.proposal.text) == len(b.proposal.text)):  # type: ignore[union-attr]
        # (of equal length only: a name that lost or gained a character was cut at another place, and the frames
        # of its span cannot speak for the characters outside it)
        # how much likelier each line's frames make the other line's name than their own reading
        a_takes_b = _log_ratio(a.proposal, b.proposal.text, lines, chars)  # type: ignore[union-attr]
        b_takes_a = _log_ratio(b.proposal, a.proposal.text, lines, chars)  # type: ignore[union-attr]
        if a_takes_b is None or b_takes_a is None:
            return out
        if b_takes_a >= a_takes_b:
            out[key_b] = _reread(b, a.proposal.text, today)  # type: ignore[arg-type]
        else:
            out[key_a] = _reread(a, b.proposal.text, today)  # type: ignore[arg-type]
    return out


def _named(d: Optional[Decision]) -> bool:
    return d is not None and d.normalized.valid


def _log_ratio(cand: Proposal, text: str, lines: Sequence[Sequence[TextLine]], chars: CharDict) -> Optional[float]:
    """log P(``text`` | the frames of ``cand``'s characters) - log P(``cand.text`` | the same frames)."""
    spots = {(p, li) for p, li, _ in cand.chars}
    if len(spots) != 1 or len(cand.chars) != len(cand.text):
        return None
    (p, li), = spots
    cis = [ci for _, _, ci in cand.chars]
    line = lines[p][li]
    if line.text[min(cis) : max(cis) + 1] != cand.text:
        return None
    return segment_log_ratio(line, min(cis), max(cis), text, chars)


def _reread(d: Decision, text: str, today: date) -> Decision:
    """``d``'s place read as ``text`` (of the same length: each character keeps its reference)."""
    norm = FIELDS[d.proposal.key].normalizer(text, today)
    return Decision(replace(d.proposal, text=text, normalized=norm), norm, redecoded_from=d.proposal.text)


def _copy(d: Decision, key: str, today: date) -> Decision:
    norm = FIELDS[key].normalizer(d.proposal.text, today)
    return Decision(replace(d.proposal, key=key, how=COPY_OF_POLICYHOLDER, normalized=norm), norm)
