"""Strategy 1, labels: the value after a lexicon label, to its right, or under it (a column table)."""
from __future__ import annotations

import re

from stages.extraction.field_specs import FIELDS
from stages.extraction.rules.amounts import capital_beside, capital_run
from stages.extraction.rules.candidates import (
    SCORE_BELOW,
    SCORE_LABEL_PLAIN,
    SCORE_LABEL_SEPARATED,
    SCORE_RIGHT,
    UNSURE_ID,
    RuleCandidate,
    retarget,
    segments_candidate,
    text_candidate,
)
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.lexicon import ROLE_FIELDS, SAME_AS_POLICYHOLDER
from stages.extraction.rules.lines import (
    LineBox,
    Segments,
    content_start,
    is_list_item,
    norm_pos,
    raw_refs,
    same_row,
    x_at,
)
from stages.extraction.rules.neighbours import below, right_of, row_run
from stages.extraction.rules.occurrences import LabelHit, skip_connectors
from stages.extraction.rules.roles import resolve_role
from stages.extraction.rules.values import strip_separators
from stages.extraction.rules.wrapping import cell_tail, continuation
from stages.extraction.strategies import LABEL, LABEL_BELOW, LABEL_RIGHT, LEARNED_PREFIX
from stages.postprocess.values import ISSUE_AMOUNT_MISMATCH, date_spans

CONTINUABLE = ("amount", "date", "id_number", "phone", "text")  # kinds whose value may wrap onto the next line
ValueSite = tuple[Segments, Segments, str, float]  # (segments, continuation, method, base score)


def hit_fields(doc: PreparedDocument, o: LabelHit) -> tuple[tuple[str, ...], float]:
    """Fields a label occurrence introduces and a score factor (bare labels resolved by context)."""
    label = o.label
    if label.kind in ("field", "period"):
        return label.fields, 1.0
    if label.kind != "attr":
        return (), 0.0
    attr = label.attr or ""
    role, near = resolve_role(doc, o)
    if role == "other":
        return (), 0.0
    field = ROLE_FIELDS.get((role, attr)) if role else None
    if field:
        return (field,), (0.95 if near else 0.85)
    if role == "beneficiary" and attr == "id":
        return (UNSURE_ID,), 0.5  # no beneficiary ID field: it may still be the insured's, printed beside
    if near and role is not None:
        return (), 0.0  # e.g. 被保险人联系电话: not a field of ours
    # unqualified 联系电话 / 通讯地址 belong to the policyholder (docs/schema.md); an ID of unknown role is offered to
    # both persons' ID fields (:func:`extract.considered`) and never decided by the rules alone
    fallback = {"phone": ("policyholder_phone", 0.75), "address": ("policyholder_address", 0.75),
                "id": (UNSURE_ID, 0.6)}
    if attr not in fallback:
        return (), 0.0
    key, factor = fallback[attr]
    return (key,), factor * (1.0 if role is None else 0.8)


def value_sites(doc: PreparedDocument, o: LabelHit) -> list[ValueSite]:
    """Where the value of a label may be: ``(segments, continuation, method, base score)``; segments are compact
    spans ``(line, start, end)``; ``continuation`` is the next line of a wrapped paragraph (for short values)."""
    line = doc.lines[o.line]
    end = doc.value_end(o.line, o.value_start)
    if o.value_start < end:
        separated = o.value_start > o.end
        return [_site(doc, o.line, o.value_start, LABEL, SCORE_LABEL_SEPARATED if separated else SCORE_LABEL_PLAIN)]
    if end < len(line.comp):
        return []  # another label follows immediately: this one's value is empty
    # a label at the end of a wrapped paragraph line: the value opens the next line (a label box ending in ':'
    # counts as wrapped only when nothing stands to its right)
    right = right_of(doc, line)
    if right is not None and (doc.starts_with_label(right.index) or _in_header_row(doc, line)):
        right = None
    nxt = continuation(doc, line.index, joiners=False)
    if nxt is None and right is None:
        nxt = continuation(doc, line.index)
    if nxt is not None:
        start, _ = skip_connectors(doc.lines[nxt].comp, 0)
        end = doc.value_end(nxt, start)
        if start < end:
            return [(((nxt, start, end),), (), LABEL, SCORE_LABEL_PLAIN)]
    sites: list[ValueSite] = []
    x0, x1 = x_at(line, o.start), line.x1
    for other, method, score in ((right, LABEL_RIGHT, SCORE_RIGHT),
                                 (below(doc, line, x0, x1), LABEL_BELOW, SCORE_BELOW)):
        if other is not None and not doc.starts_with_label(other.index) and not is_list_item(other.comp):
            sites.append(_site(doc, other.index, 0, method, score))
    return sites


def value_span(doc: PreparedDocument, key: str, segments: Segments, cont: Segments) -> Segments:
    """A site's value for ``key``: its segments, with the wrapped continuation for a kind that may run on
    (:data:`CONTINUABLE`: text such as an address or a product, amounts, dates, numbers; not a name); an address
    without one may have its end on a short line just below it (:func:`~stages.extraction.rules.wrapping.cell_tail`)."""
    if key == "policyholder_address" and not cont:
        return segments + cell_tail(doc, segments[-1])
    return segments + cont if cont and FIELDS[key].kind in CONTINUABLE else segments


def _site(doc: PreparedDocument, li: int, start: int, method: str, score: float) -> ValueSite:
    """A value from ``start`` to the next label of line ``li``, plus the wrapped continuation when it runs to the
    end of the line."""
    end = doc.value_end(li, start)
    nxt = continuation(doc, li) if end == len(doc.lines[li].comp) else None
    cont: Segments = ((nxt, 0, doc.value_end(nxt, 0)),) if nxt is not None else ()
    return ((li, start, end),), cont, method, score


def _in_header_row(doc: PreparedDocument, line: LineBox) -> bool:
    """A header row of a column table: other label boxes on the row, and under the row a row of several values
    (no labels) lying under this box and under another label box."""
    others = []
    for other in doc.live:
        if other is line or not same_row(line, other) or not doc.hits[other.index]:
            continue
        o = doc.hits[other.index][0]
        if o.start <= content_start(other.comp) and doc.value_end(other.index, o.value_start) <= o.value_start:
            others.append(other)
    if not others:
        return False
    under = [ln for ln in doc.live if ln.page == line.page and ln.cy > line.y1
             and ln.y0 - line.y1 <= 2.0 * line.height]
    if not under:
        return False
    top = min(under, key=lambda ln: ln.y0)
    row = [ln for ln in under if same_row(ln, top)]
    headers = [ln for ln in doc.live if ln is line or same_row(ln, line)]
    if len(row) < 2 or len(row) != len(headers) or any(doc.starts_with_label(ln.index) for ln in row):
        return False

    def covered(box: LineBox) -> bool:
        return any(min(ln.x1, box.x1) - max(ln.x0, box.x0) > 0.3 * min(ln.x1 - ln.x0, box.x1 - box.x0) for ln in row)

    return covered(line) and any(covered(o) for o in others)


def _same_as_policyholder(doc: PreparedDocument, segments: Segments) -> bool:
    """The value reads 同投保人, 本人 or the like."""
    li, cs, ce = segments[0]
    if ce <= cs:
        return False
    line = doc.lines[li]
    n0, n1 = norm_pos(line, cs), line.comp_to_norm[ce - 1] + 1
    s, e = strip_separators(line.norm, n0, n1)
    text = re.sub(r"\s+", "", line.norm[s:e])
    return any(text.startswith(w) for w in SAME_AS_POLICYHOLDER)


def label_candidates(doc: PreparedDocument) -> tuple[list[RuleCandidate], set[str]]:
    """Candidates from every strong label hit, and the insured fields printed as 同投保人 (same as the policyholder)."""
    out: list[RuleCandidate] = []
    same_as: set[str] = set()
    for occs in doc.hits:
        for o in occs:
            fields, factor = hit_fields(doc, o)
            if not fields:
                continue
            for segments, cont, method, base in value_sites(doc, o):
                if o.label.kind == "period":
                    if method != LABEL:  # a value box: the period may be split into touching boxes
                        segments = row_run(doc, segments)
                    out.extend(period_candidates(doc, segments + cont, method, base * factor))
                    continue
                for key in fields:
                    if key in ("insured_name", "insured_id_number") and _same_as_policyholder(doc, segments):
                        same_as.add(key)
                        continue
                    real = "policyholder_id_number" if key == UNSURE_ID else key
                    site = value_span(doc, real, segments, cont)
                    how = LEARNED_PREFIX + method if o.label.learned else method
                    c = segments_candidate(doc, real, site, how, base * factor)
                    if c is not None and FIELDS[real].kind == "amount":
                        c = _checked_against_capital(doc, c, site[-1], base * factor)
                    if c is not None:
                        out.append(retarget(c, UNSURE_ID) if key == UNSURE_ID else c)
    return out, same_as


def _checked_against_capital(doc: PreparedDocument, c: RuleCandidate, last: tuple[int, int, int],
                             base: float) -> RuleCandidate:
    """An amount followed on its line by a capital amount that disagrees (``¥87.60  大写：捌仟柒佰陆拾元整``): the
    capital amount, with the ``amount_mismatch`` issue."""
    if capital_run(c.match.text) is not None or not any(ch.isdigit() for ch in c.match.text):
        return c  # the value holds its capital amount already, or no digits to check
    found = capital_beside(doc, last[0], last[2])
    if found is None:
        return c
    box, cs, ce = found
    line = doc.lines[box]
    refs = raw_refs(line, line.comp_to_norm[cs], line.comp_to_norm[ce - 1] + 1)
    alt = text_candidate(doc, c.key, line.comp[cs:ce], refs, (box,), c.match.method, base,
                         issues=(ISSUE_AMOUNT_MISMATCH,))
    return c if alt is None or alt.match.value == c.match.value else alt


def period_candidates(doc: PreparedDocument, segments: Segments, method: str, base: float) -> list[RuleCandidate]:
    """``保险期间: 自<date>零时起至<date>二十四时止`` -> effective and expiry candidates."""
    text = "".join(doc.lines[li].comp[cs:ce] for li, cs, ce in segments)
    spans = date_spans(text)
    keys: tuple[str, ...] = ("effective_date", "expiry_date")
    if spans and (re.search(r"(?:至|到|止于)$", text[:spans[0][0]])
                  or (len(spans) == 1 and text[:spans[0][0]] in ("-", "~", "—", "至"))):
        keys = ("expiry_date",)  # 保险期间至<date>, or the second half of a period split across boxes
    out = []
    for key, (s, e) in zip(keys, spans[:2]):
        c = segments_candidate(doc, key, _sub_segments(segments, s, e), method, base)
        if c is not None:
            out.append(c)
    return out


def _sub_segments(segments: Segments, s: int, e: int) -> Segments:
    """The part ``[s, e)`` of the concatenation of compact segments, as segments."""
    out = []
    offset = 0
    for li, cs, ce in segments:
        length = ce - cs
        a, b = max(s - offset, 0), min(e - offset, length)
        if a < b:
            out.append((li, cs + a, cs + b))
        offset += length
    return tuple(out)
