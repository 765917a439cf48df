"""Learning label wordings from corrected documents: each corrected value's place in the OCR boxes, the label-like
text that introduces it and by which layout relation (:mod:`.wordings`), counted per field over the documents.

A value that two corrected fields of a document share (a policyholder who is also the insured, an issue date that
is the start date) is printed under each field's label, and where both labels are new the document alone cannot
say which is which. Such a field's wordings are kept apart (``Learned.shared``) and resolved against what the
documents without that doubt taught (:func:`resolved`)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Iterable, Optional, Sequence

from models.adapt.labelled import Correction, LabelledDocument
from models.adapt.locate import Located, occurrences, wrapped_occurrence
from models.adapt.wordings import Finding, learn_from
from stages.contracts.fields import field_role
from stages.extraction.field_specs import FIELDS
from stages.extraction.rules.lexicon import FULL_LEXICON, Lexicon
from stages.postprocess.values import compact

_MAX_PLACES = 5


@dataclass
class Learned:
    """Counts of (field, wording, relation) and what happened to each corrected field."""

    wordings: Counter = field(default_factory=Counter)
    fields: Counter = field(default_factory=Counter)  # known, learned, no_label, not_found
    labelled: Counter = field(default_factory=Counter)  # per field: documents where a known or learned label was
    texts: list[str] = field(default_factory=list)  # per document: its boxes' text, whitespace removed
    # per wording text, the documents whose text holds it, where counted ahead (:func:`without`); else
    # :func:`printed_in` counts over ``texts``
    printed: Optional[Counter] = None
    # per (field, the new wordings at its value's places in order as (text, relation), the other fields sharing
    # the value): the documents where a value two fields share had several new wordings (:func:`resolved`)
    shared: Counter = field(default_factory=Counter)


def combined(parts: Iterable[Learned]) -> Learned:
    """The counts of several documents' :class:`Learned` together (each count adds up over documents)."""
    out = Learned()
    for part in parts:
        out.wordings.update(part.wordings)
        out.shared.update(part.shared)
        out.fields.update(part.fields)
        out.labelled.update(part.labelled)
        out.texts.extend(part.texts)
    return out


def without(folder: Learned, part: Learned, printed: Counter) -> Learned:
    """``folder`` less one document's ``part`` (both :func:`combined` counts), with ``printed``, the folder's
    :func:`printed_in` counts of the wordings that matter, carried over less the part's: what the other documents
    taught, in time proportional to the number of wordings rather than of documents."""
    left = Counter({t: n - sum(compact(t) in x for x in part.texts) for t, n in printed.items()})
    return Learned(folder.wordings - part.wordings, folder.fields - part.fields, folder.labelled - part.labelled,
                   [], left, folder.shared - part.shared)


def _places(doc: LabelledDocument, c: Correction, today: date) -> list[Located]:
    found = occurrences(c.key, c.value, doc.boxes, today, only=c.span)
    if not found and c.span is not None:
        found = occurrences(c.key, c.value, doc.boxes, today)
    if not found and FIELDS[c.key].kind == "text":
        wrapped = wrapped_occurrence(c.value, doc.boxes)
        found = [wrapped] if wrapped is not None else []
    if c.text and len(found) > 1:  # the place the pipeline had read first
        hint = compact(c.text)
        found.sort(key=lambda at: hint not in compact(doc.boxes[at.line].text))
    return found[:_MAX_PLACES]


def learn(docs: Sequence[LabelledDocument], lexicon: Lexicon = FULL_LEXICON, today: Optional[date] = None) -> Learned:
    """Each corrected value's wording: where the lexicon already names the field at one of the value's places,
    nothing; else the first unknown label-like text around it (:func:`models.adapt.wordings.learn_from`)."""
    today = today or date.today()
    out = Learned()
    for doc in docs:
        out.texts.append("\n".join(compact(b.text) for b in doc.boxes))
        values = {compact(c.value) for c in doc.corrections}
        sharing = {c.key: frozenset(o.key for o in doc.corrections if o.key != c.key
                                    and compact(o.value) == compact(c.value)) for c in doc.corrections}
        for c in doc.corrections:
            places = _places(doc, c, today)
            if not places:
                out.fields["not_found"] += 1
                continue
            results: list[Finding] = [f for at in places if (f := learn_from(c.key, at, doc.boxes, lexicon, values,
                                                                              compact(c.value)))]
            out.labelled[c.key] += bool(results)
            if any(f.known for f in results):
                out.fields["known"] += 1
            elif results:
                out.fields["learned"] += 1
                options = tuple(dict.fromkeys((f.text, f.relation) for f in results))
                if sharing[c.key] and len({t for t, _ in options}) > 1:
                    out.shared[(c.key, options, sharing[c.key])] += 1
                else:
                    out.wordings[(c.key, results[0].text, results[0].relation)] += 1
            else:
                out.fields["no_label"] += 1
    return out


MIN_SHARE = 0.3  # a wording must introduce the field in this share of the documents where a label did,
MIN_PRECISION = 0.5  # or in this share of the documents that print it at all (one insurer among several),
MIN_TAUGHT = 3  # in this many documents at least (as many as the held-out check needs, models/adapt/check.py)


def printed_in(learned: Learned, text: str) -> int:
    """The corrected documents whose OCR text holds ``text``."""
    if learned.printed is not None:
        return learned.printed[text]
    needle = compact(text)
    return sum(needle in t for t in learned.texts)


def kept(learned: Learned, key: str, text: str, count: int) -> bool:
    """Whether a wording that introduced ``key`` in ``count`` documents (by any relation) is kept: it is the
    field's wording in at least :data:`MIN_SHARE` of the documents where the field's value had a label (known or
    learned), or in at least :data:`MIN_PRECISION` of the documents that print it and in :data:`MIN_TAUGHT` of
    them. The first keeps the wording of a folder of one form; the second that of each insurer in a folder of
    several, whose wordings each introduce the field in a few documents only. A stray aside that stood next to a
    value whose labelled form the OCR lost is printed on the other documents of its layout too, where it
    introduces nothing, and fails both."""
    return _by_share(learned, key, count) or _precise(count, printed_in(learned, text), MIN_TAUGHT)


def _by_share(learned: Learned, key: str, count: int) -> bool:
    return count >= MIN_SHARE * learned.labelled[key]


def _precise(count: int, printed: int, at_least: int) -> bool:
    """The precision test: taught in ``at_least`` documents, and in :data:`MIN_PRECISION` of the ``printed`` ones
    whose text holds the wording."""
    return count >= at_least and count >= MIN_PRECISION * printed


def kept_by_precision(learned: Learned, key: str, text: str, count: int) -> bool:
    """Whether a :func:`kept` wording is kept by the precision test alone (one insurer's among several), not by its
    share of the field's documents."""
    return not _by_share(learned, key, count) and kept(learned, key, text, count)


def held_out_keeps(count: int, printed: int) -> bool:
    """Whether a wording the whole folder keeps by precision alone is kept for a held-out reading, the held-out
    document counted toward :func:`kept`'s precision test: the other documents taught it in ``count`` documents,
    at least :data:`MIN_TAUGHT` - 1, and in :data:`MIN_PRECISION` of the ``printed`` ones whose text holds it. A
    wording that exactly :data:`MIN_TAUGHT` documents taught is then read on each of them with the other two's
    teaching (models/adapt/check.py)."""
    return _precise(count, printed, MIN_TAUGHT - 1)


def resolved(learned: Learned) -> Counter:
    """Per (field, wording, relation): the documents in which the wording introduced the field. A field whose value
    another field of its document shares (``Learned.shared``) takes, of the new wordings at the value's places,
    the first that documents without that doubt taught it and not more often one of the sharing fields; else
    the first that they taught none of the sharing fields, where they taught one of them another of those
    wordings; else, between two persons' fields, the one the heads of its person's wordings settle (:func:`_by_wording_head`);
    else none: nothing says which wording is whose."""
    clear = _per_wording(learned.wordings)
    out = Counter(learned.wordings)
    for (key, options, rivals), count in learned.shared.items():
        pick = _by_teaching(key, options, rivals, clear) or _by_wording_head(key, options, rivals, clear)
        if pick is not None:
            out[(key, *pick)] += count
    return out


def _by_teaching(key: str, options: tuple, rivals: frozenset, clear: Counter) -> Optional[tuple[str, str]]:
    """The first option the documents without doubt taught ``key`` more often than a sharing field; else the first
    they taught no sharing field, where they taught one another option."""
    claimed = {text: max(clear[(r, text)] for r in rivals) for text, _ in options}
    own = [o for o in options if clear[(key, o[0])] > claimed[o[0]]]
    free = [o for o in options if not claimed[o[0]]]
    return own[0] if own else (free[0] if free and len(free) < len(options) else None)


_HEAD = 2  # a wording's first characters, which two labels of one person share (契约人 and 契约人电话)


def _by_wording_head(key: str, options: tuple, rivals: frozenset, clear: Counter) -> Optional[tuple[str, str]]:
    """For a person's field whose value another person's field shares (a self-insured policyholder): the option
    whose head (first ``_HEAD`` characters) begins a wording taught without doubt to one of this person's fields
    and to none of the other persons' (契约人 beside 契约人电话, the policyholder's phone); else the one option whose
    head begins none of theirs, where another's does. (A label's role word, its text minus the attribute word, is
    ``stages.extraction.learned.assign.role_word``; a head needs no attribute word to be known.)"""
    mine, theirs = field_role(key), {field_role(r) for r in rivals} - {None}
    if mine is None or not theirs or mine in theirs:
        return None

    def leans(text: str, persons: set) -> bool:
        head = text[:_HEAD]
        return any(n > 0 and field_role(k) in persons and t[:_HEAD] == head for (k, t), n in clear.items())

    own = [o for o in options if leans(o[0], {mine}) and not leans(o[0], theirs)]
    free = [o for o in options if not leans(o[0], theirs)]
    return own[0] if own else (free[0] if len(free) == 1 and len(free) < len(options) else None)


def taught(learned: Learned) -> Counter:
    """Per (field, wording): the documents in which the wording introduced the field, by any relation."""
    return _per_wording(resolved(learned))


def _per_wording(by_relation: Counter) -> Counter:
    """Counts per (field, wording, relation) added up per (field, wording)."""
    out: Counter = Counter()
    for (key, text, _), count in by_relation.items():
        out[(key, text)] += count
    return out


def wordings_json(learned: Learned) -> dict[str, list[dict[str, Any]]]:
    """Per field, its wordings, most frequent first, each :func:`kept` (the others are noise)."""
    by_relation = resolved(learned)
    counts = _per_wording(by_relation)
    out: dict[str, list[dict[str, Any]]] = {}
    for (key, text, relation), count in sorted(by_relation.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0])):
        if kept(learned, key, text, counts[(key, text)]):
            out.setdefault(key, []).append({"wording": text, "relation": relation, "count": count})
    return out


def left_out_json(learned: Learned) -> dict[str, list[dict[str, Any]]]:
    """Per field, the wordings taught but not :func:`kept`, most taught first: ``count``, the documents in which
    each introduced the field; ``printed``, the documents whose OCR text holds it. What more corrections of the
    same form would teach (a wording taught once needs a second document), or a stray word left out."""
    out: dict[str, list[dict[str, Any]]] = {}
    for (key, text), count in sorted(taught(learned).items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])):
        if not kept(learned, key, text, count):
            out.setdefault(key, []).append({"wording": text, "count": count, "printed": printed_in(learned, text)})
    return out
