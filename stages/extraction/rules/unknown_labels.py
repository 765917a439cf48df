"""Strategy 4, labels outside the lexicon (an insurer's own wording, or a lexicon label withheld in measurement:
``基本保险金额：`` without that label): matched to fields by similarity to known labels, they fill the fields still
empty."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional

from stages.extraction.field_specs import FIELD_KEYS, FIELDS
from stages.extraction.label_similarity import LABEL_LIKE, field_similarities, label_likeness
from stages.extraction.rules.candidates import RuleCandidate, segments_candidate
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.labels import ValueSite, hit_fields, period_candidates, value_sites, value_span
from stages.extraction.rules.lexicon import (
    ATTR_WORDS,
    DATE_LABEL_ENDS,
    DATE_MEANING_WORDS,
    DISTRACTOR_WORDS,
    ROLE_FIELDS,
    ROLE_NAME_FIELDS,
    ROLE_WORDS,
    SECTION_SUFFIXES,
    LabelDef,
)
from stages.extraction.rules.lines import CJK_RE, PUNCT, content_start
from stages.extraction.rules.occurrences import LabelHit, label_box_end, skip_connectors
from stages.extraction.rules.values import AMOUNT_CHARS
from stages.extraction.strategies import UNKNOWN_LABEL
from stages.postprocess.regions import opens_with_division

_SCORE_UNKNOWN = 0.6  # times the site's base score: above bare patterns, below every known label
_MIN_SIMILARITY = 0.2
_ROLE_PREFIX_BONUS = 0.5
_UNKNOWN_RUN_RE = re.compile(r"[\u4e00-\u9fff]{2,10}(?:\([\u4e00-\u9fff]{1,6}\))?")
_NAME_KINDS = ("name", "beneficiary")


@dataclass(frozen=True)
class _Unknown:
    hit: LabelHit
    text: str  # the label as printed, compact
    glued: bool = False  # no separator: the value follows the label in the same run (被保人王五, 被保人 unknown)

    @property
    def site_key(self) -> tuple[int, int]:
        """Where the label starts; the readings of one glued run share it (only one of them is used)."""
        return self.hit.line, self.hit.start


def _known_label_ends(doc: PreparedDocument, li: int, s: int, e: int, strong_only: bool) -> bool:
    """A known label ends at ``e`` (starting at or after ``s``): the label pass reads it, or it is a distractor
    (someone's 职业, 性别)."""
    for o in (doc.hits[li] if strong_only else doc.all_hits[li]):
        if o.end != e or o.start < s:
            continue
        if o.label.kind in ("field", "period", "distractor") or (o.label.kind == "attr" and o in doc.hits[li]):
            return True
    return False


def _unknown_label_text_ok(text: str, doc: PreparedDocument) -> bool:
    if text in doc.lexicon.labels or text.endswith(SECTION_SUFFIXES) or any(w in text for w in DISTRACTOR_WORDS):
        return False
    return not any(role == "other" and w in text for w, role in ROLE_WORDS.items())


def _unknown_labels(doc: PreparedDocument) -> list[_Unknown]:
    """Label-like runs the lexicon does not know: a CJK run opening a line (or following a gap or punctuation)
    and ending in a colon or leaders; a short line that is nothing but such a run (a table header, a label box)
    with a value box to its right or below; or, at a line start without any separator, every split of the run
    into a label of 2-8 characters and a glued value (the similarity then picks the split)."""
    out: list[_Unknown] = []
    for li in doc.order:
        line = doc.lines[li]
        comp = line.comp
        line_start = content_start(comp)
        for m in _UNKNOWN_RUN_RE.finditer(comp):
            s, e = m.span()
            if s > line_start and comp[s - 1] not in PUNCT and line.comp_to_norm[s] - line.comp_to_norm[s - 1] <= 1:
                continue  # inside running text
            value_start, separated = label_box_end(comp, s, e, *skip_connectors(comp, e))
            whole_line = s <= line_start and e == len(comp) and e - s <= 10
            text = comp[s:e]
            if (separated or whole_line) and _unknown_label_text_ok(text, doc) and not (
                    not separated and label_likeness(text, doc.lexicon.by_field) < LABEL_LIKE) and not _known_label_ends(
                    doc, li, s, e, strong_only=False):
                out.append(_Unknown(LabelHit(li, s, e, LabelDef(text, "field"), True, value_start), text))
            opened = any(o.start <= s and (o.label.kind != "distractor" or o.value_start > o.end) for o in doc.hits[li])
            if separated or s > line_start or opened:
                continue  # a known label opens the line (a distractor only when a separator follows: 保险责任开始日…)
            for k in range(s + 2, min(s + 9, len(comp))):
                text = comp[s:k]
                if _unknown_label_text_ok(text, doc) and not _known_label_ends(doc, li, s, k, strong_only=True):
                    out.append(_Unknown(LabelHit(li, s, k, LabelDef(text, "field"), True, k), text, glued=True))
    return out


_GLUED_KINDS = ("name", "beneficiary", "id_number", "phone", "date", "amount", "code")
_KEY_ROLE: dict[str, str] = {key: role for (role, _), key in ROLE_FIELDS.items()}
_KEY_ROLE.update({key: role for role, key in ROLE_NAME_FIELDS.items()})


def _explicit_role(text: str) -> Optional[str]:
    """The role a label names with a known role word (投保人证件号码 -> policyholder), if exactly one."""
    roles = {role for word, role in ROLE_WORDS.items() if word in text and role != "other"}
    return roles.pop() if len(roles) == 1 else None


def date_meaning(text: str) -> Optional[str]:
    """Which date a date label names by its words (:data:`lexicon.DATE_MEANING_WORDS`): a date key, ``_period`` for
    a label naming both ends, ``None`` for a label that is no date label or says nothing (or contradicts itself)."""
    if not text.endswith(DATE_LABEL_ENDS):
        return None
    found = {key for key, words in DATE_MEANING_WORDS.items() if any(w in text for w in words)}
    if found == {"effective_date", "expiry_date"}:
        return "_period"
    return found.pop() if len(found) == 1 else None


_PERSON_LABEL_ENDS = ("人", "姓名", "名称")  # 被保人, 受益人, 投保人姓名
_GLUED_PRODUCT_SIMILARITY = 0.6


def _glued_ok(u: _Unknown, key: str, doc: PreparedDocument) -> bool:
    """May a glued label introduce ``key``? Only values of a distinct shape; a person's name only after a label
    that names a person (ends in 人, 姓名, 名称), or ``保险凭证`` would read as 保险 + a name 凭证; a product only
    after a label very like a product label (险种名称; a head such as 保险条款 is as like 保险人 and 保险费); an
    address only where the value after the label opens with a province or city name (``投保方住所江苏省…``: not
    after 投保, whose value would begin 方住所)."""
    text = u.text
    if key == "product_name":
        return field_similarities(text, {key: doc.lexicon.by_field[key]})[key] >= _GLUED_PRODUCT_SIMILARITY
    if key == "policyholder_address":
        return opens_with_division(doc.lines[u.hit.line].comp, u.hit.value_start)
    if key not in FIELDS or FIELDS[key].kind not in _GLUED_KINDS:
        return False
    return FIELDS[key].kind not in _NAME_KINDS or text.endswith(_PERSON_LABEL_ENDS)


def unknown_label_candidates(doc: PreparedDocument, filled: Mapping[str, RuleCandidate]) -> list[RuleCandidate]:
    """Candidates for still-empty fields from labels outside the lexicon.

    Each unknown label is compared with the known labels of every empty field (:mod:`label_similarity`); its value
    must fit the field's shape. Pairs are taken greedily, most similar first, then in reading order, so two unknown
    person labels fill the policyholder before the insured; names go first, and an unknown label that starts with an
    unknown name label already placed (``被保人`` → ``被保人证件号码``, both unknown) follows that person's role. A glued label
    (no separator) may only introduce a value of a distinct shape (a name, number, date, amount or address).
    """
    taken = {(c.match.line_indices, c.match.value) for c in filled.values()}
    unknowns = _unknown_labels(doc)
    label_lines = {u.hit.line for u in unknowns
                   if not u.glued and u.hit.start == content_start(doc.lines[u.hit.line].comp)}
    sites = {id(u): [site for site in value_sites(doc, u.hit) if site[0][0][0] == u.hit.line
                     or site[0][0][0] not in label_lines] for u in unknowns}
    out: list[RuleCandidate] = []
    used: set[tuple[int, int]] = set()
    cells = [o for hits in doc.hits for o in hits if o.label.kind != "period"
             and o.start <= content_start(doc.lines[o.line].comp) and o.value_start >= len(doc.lines[o.line].comp)
             and value_sites(doc, o)]
    named = {key for o in cells for key in hit_fields(doc, o)[0]}
    # a field whose own (known) label is a label cell with a value box beside or under it is not given to a label
    # outside the lexicon (a period label is not counted: it may hold a duration such as 1年)
    empty = [key for key in FIELD_KEYS if key not in filled and key not in named]
    prefix_role: dict[str, str] = {}
    for phase in ("names", "rest"):
        pairs: list[tuple[bool, float, int, int, _Unknown, str, list[RuleCandidate]]] = []
        keys = [k for k in empty + ["_period"] if (FIELDS[k].kind in _NAME_KINDS if k in FIELDS else False)
                == (phase == "names")]
        for u in unknowns:
            if u.site_key in used:
                continue
            role = _explicit_role(u.text)
            allowed = [k for k in keys if (not u.glued or _glued_ok(u, k, doc))
                       and (role is None or _KEY_ROLE.get(k) in (None, role))]
            meaning = date_meaning(u.text)
            if meaning is not None:
                allowed = [k for k in allowed if k == meaning]
            sims = field_similarities(u.text, {k: doc.lexicon.by_field[k] for k in allowed})
            if meaning in sims:
                sims[meaning] = max(sims[meaning], _MIN_SIMILARITY)
            for prefix, prefix_owner in prefix_role.items():
                if u.text.startswith(prefix) and u.text != prefix:
                    for attr in ATTR_WORDS:
                        key = ROLE_FIELDS.get((prefix_owner, attr))
                        if key in sims:
                            sims[key] += _ROLE_PREFIX_BONUS
            for key, sim in sims.items():
                if sim < _MIN_SIMILARITY:
                    continue
                cands = _unknown_site_candidates(doc, key, sites[id(u)], sim)
                if cands and not any((c.match.line_indices, c.match.value) in taken for c in cands):
                    order = FIELD_KEYS.index(key) if key in FIELDS else len(FIELD_KEYS)
                    pairs.append((role is None, -round(sim, 2), doc.rank[u.hit.line], order, u, key, cands))
        pairs.sort(key=lambda p: p[:4])  # labels that name a known role (投保人证件号码) first
        done: set[str] = set()
        for _, _, _, _, u, key, cands in pairs:
            if u.site_key in used or key in done or (key == "_period" and {"effective_date", "expiry_date"} & done):
                continue
            used.add(u.site_key)
            done.update([key] if key != "_period" else [c.key for c in cands])
            out.extend(cands)
            if phase == "names" and key in _KEY_ROLE:
                prefix_role[u.text] = _KEY_ROLE[key]
        empty = [k for k in empty if k not in done]
    return out


def _unknown_site_candidates(doc: PreparedDocument, key: str, sites: list[ValueSite],
                             sim: float) -> list[RuleCandidate]:
    """The first site whose value fits ``key`` (a period label: the dates of the first site holding any)."""
    factor = _SCORE_UNKNOWN * min(1.0, 0.5 + sim)
    for segments, cont, method, base in sites:
        if key == "_period":
            found = period_candidates(doc, segments + cont, UNKNOWN_LABEL, base * factor)
            if found:
                return found
            continue
        c = segments_candidate(doc, key, value_span(doc, key, segments, cont), UNKNOWN_LABEL, base * factor)
        if c is not None and FIELDS[key].kind == "amount" and any(
                CJK_RE.match(ch) and ch not in AMOUNT_CHARS for ch in c.match.text):
            c = None  # 智选住院医疗保险(2024版) is no amount, however it parses
        if c is not None and FIELDS[key].kind == "phone" and c.match.normalized.issues:
            c = None  # a label outside the lexicon is weak evidence: only a well-formed number is a phone
        if c is not None:
            return [c]
    return []
