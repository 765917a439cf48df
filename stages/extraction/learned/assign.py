"""One joint assignment per document: at most one candidate per field, no character used by two fields, and the
cross-field constraints (issue <= effective < expiry, no policy date a chosen ID number's birth date, premium < sum
insured, one valid ID number = one person, the beneficiary is not the insured, a table row or column that one role
cell heads holds one person's fields, two people's values never printed after labels of one role word, one person's
name and ID number never after labels of two unlike role words no list knows), maximising
the sum of log P (for an empty field, log of ABSENT_ODDS x P(absent), at most log CARRIED_P for a field that is
rarely absent) by an exact branch and bound over each field's top candidates."""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Mapping, Optional, Sequence

import numpy as np

from stages.contracts.fields import field_role
from stages.contracts.types import TextLine
from stages.extraction.learned.candidates import Candidate, CharRef, DocLines
from stages.extraction.learned.features import ROLE_OF
from stages.extraction.rules.lexicon import ALL_ATTR_WORDS, ATTR_QUALIFIERS, ROLE_WORDS, Lexicon
from stages.extraction.rules.lines import LineBox, merge_wrapped_labels, page_boxes, same_row
from stages.postprocess.values import id_birth_date

TOP_K = 5  # candidates per field the search considers (distinct value and span), besides "no value"
MAX_NODES = 200_000  # search nodes before the best assignment found so far is taken
_EPS = 1e-6
# "no value" scores log(ABSENT_ODDS * (1 - P of the field's best candidate)): a field takes its best candidate once
# that P exceeds ABSENT_ODDS / (1 + ABSENT_ODDS), about 0.09. A value it is unsure of still goes to review by its
# calibrated confidence; leaving the field empty would lose it outright. Chosen on dev (docs/decisions.md).
ABSENT_ODDS = 0.1
# a field whose empty outputs the learned calibration found really absent at a rate (null_ok) under RARELY_ABSENT
# (a policy prints its number, insurer, holder, insured, sum insured and start date) scores "no value" at most
# log(CARRIED_P): it takes its best consistent candidate from P 0.01 on. The shipped calibration's are all required
# fields, so an empty one went to review as well; the value now shows, marked unsure. Chosen on dev
# (docs/decisions.md).
CARRIED_P = 0.01
RARELY_ABSENT = 0.25


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    p: float  # the scorer's P(candidate is the field's value)


def _attr(key: str) -> str:
    return key.split("_", 1)[1] if key.startswith(("policyholder_", "insured_")) else key


def may_share_span(a: str, b: str) -> bool:
    """The policyholder's and the insured's same attribute may be one printed value (投保人/被保险人: 张三)."""
    return {a.split("_", 1)[0], b.split("_", 1)[0]} == {"policyholder", "insured"} and _attr(a) == _attr(b)


LineRef = tuple[int, int]  # (page, line index)


@dataclass(frozen=True)
class RoleCells:
    """Where one role word heads a table row or column: ``row[line]`` / ``column[line]`` = the line of the role
    cell heading the row / column the line is in (absent where no single role heads it); ``words[char]`` = the
    role word of the label printed right before a value that starts at ``char`` (:func:`label_words`)."""

    row: Mapping[LineRef, LineRef] = field(default_factory=dict)
    column: Mapping[LineRef, LineRef] = field(default_factory=dict)
    words: Mapping[CharRef, str] = field(default_factory=dict)
    # the role words of ``words`` that name no role the lexicon (or a role head: 投保, 被保, 受益) knows: 契约人, 保险对象
    new_words: frozenset[str] = frozenset()
    # the role words of ``words`` that label two values or more (保险对象 / 保险对象证件号): the page shows them shared
    repeated: frozenset[str] = frozenset()

    def same_cell(self, a: Candidate, b: Candidate) -> bool:
        """Whether ``a`` and ``b`` take their values from one role-headed row or one role-headed column."""
        la, lb = a.chars[0][:2], b.chars[0][:2]
        return any(m.get(la) is not None and m.get(la) == m.get(lb) for m in (self.row, self.column))

    def same_word(self, a: Candidate, b: Candidate) -> bool:
        """Whether ``a`` and ``b`` are printed after labels of one role word (保险对象 / 保险对象证件号)."""
        wa = self.words.get(a.chars[0])
        return wa is not None and wa == self.words.get(b.chars[0])

    def two_new_words(self, a: Candidate, b: Candidate) -> bool:
        """Whether ``a`` and ``b`` are printed after labels of two role words that no list knows, that share no two
        characters in a row, and one of which labels another value on the page too (领款人: 钟佳宁 beside
        保险对象证件号: … where 保险对象: 毛晶若 is printed; not 保障人员 beside 受保障人身份证号, two wordings of one
        person, nor two words each printed once, 保险享有人 beside 参保人证件号码, which the page does not tell
        apart)."""
        wa, wb = self.words.get(a.chars[0]), self.words.get(b.chars[0])
        return (wa is not None and wb is not None and wa in self.new_words and wb in self.new_words
                and not _bigrams(wa) & _bigrams(wb) and (wa in self.repeated or wb in self.repeated))


def _bigrams(word: str) -> set[str]:
    return {word[i:i + 2] for i in range(len(word) - 1)}


# a label right before its value on one line: a run of Chinese characters, its colon, maybe spaces
_LABEL_BEFORE = re.compile(r"([\u4e00-\u9fff]{2,12})[:：]\s*")
_ENDS_LABEL = re.compile(r"[\u4e00-\u9fff][:：]\s*$")  # a box that ends with a label's colon holds no value after it


def role_word(label: str) -> Optional[str]:
    """What a label says of whose value follows: the label without the attribute word that ends it and the
    qualifiers before that word (保障者证件号 -> 保障者, 缔约方居住地址 -> 缔约方, 保障者 -> 保障者), or None where
    fewer than two characters are left (姓名, 证件号码: the person is named elsewhere) or where what is left ends a
    known role word without being one (保人, 益人: a label whose first characters the recognizer lost, which could be
    anyone's)."""
    word = label
    attr = max((w for w in ALL_ATTR_WORDS if word.endswith(w)), key=len, default="")
    word = word[:len(word) - len(attr)]
    if attr:
        word = word[:len(word) - len(max((q for q in ATTR_QUALIFIERS if word.endswith(q)), key=len, default=""))]
    if len(word) < 2 or (word not in ROLE_WORDS and any(r.endswith(word) for r in ROLE_WORDS)):
        return None
    return word


def label_words(doc: DocLines, boxes: Mapping[int, Sequence[LineBox]]) -> dict[CharRef, str]:
    """Per value start, the role word of the label printed right before it (:func:`role_word`), whatever the label's
    wording: the first character after a label's colon on its line, or, where a box ends with a label and its colon
    (the recognizer read label and value apart), the first of the next box right of it on its row unless that box
    ends with a label's colon too (the label's own value is empty). Two values whose labels share a role word belong
    to one person, known words or not. ``boxes``: per page, the boxes of its horizontal lines (``LineBox.index``
    the line's index on its page)."""
    out: dict[CharRef, str] = {}
    for p, li, ln in doc.flat:
        for m in _LABEL_BEFORE.finditer(ln.text):
            word = role_word(m.group(1))
            if word is None:
                continue
            if m.end() < len(ln.text):
                out[(p, li, m.end())] = word
            elif not ln.vertical and (right := _box_right_of(li, boxes.get(p, ()))) is not None \
                    and not _ENDS_LABEL.search(doc.line((p, right, 0)).text):
                out[(p, right, 0)] = word
    return out


def _box_right_of(li: int, boxes: Sequence[LineBox]) -> Optional[int]:
    """The line whose box comes next right of line ``li``'s on its row (``same_row``): its left edge at most half a
    height left of ``li``'s right edge."""
    box = next(b for b in boxes if b.index == li)
    right = [(b.x0, b.index) for b in boxes if b.index != li and b.x0 >= box.x1 - box.height / 2 and same_row(box, b)]
    return min(right)[1] if right else None


def _roles_in(text: str, lexicon: Lexicon) -> set[str]:
    return {d.role for m in lexicon.pattern.finditer(text)
            if (d := lexicon.labels.get(m.group())) is not None and d.role}


def _role_cell(text: str, lexicon: Lexicon) -> Optional[str]:
    """The person's role a table's role cell names (``投保人``, ``被保险人：``, a learned role word), or None: a short
    text, no value after a separator, no attribute word (``被保险人姓名`` is a column's label, not a row's)."""
    t = text.strip().rstrip(":：").strip()
    if not 0 < len(t) <= 8 or any(ch in t for ch in ":：") or any(ch.isdigit() for ch in t) or any(
            w in t for w in ALL_ATTR_WORDS):
        return None
    roles = _roles_in(t, lexicon)
    return next(iter(roles)) if len(roles) == 1 and roles != {"other"} else None


def _aligned(a: np.ndarray, b: np.ndarray) -> bool:
    """Two boxes of one table row: centres within a third of the smaller height."""
    h = max(1.0, min(a[3] - a[1], b[3] - b[1]))
    return abs((a[1] + a[3]) - (b[1] + b[3])) / 2 <= h / 3


def role_cells(doc: DocLines, lexicon: Lexicon) -> RoleCells:
    """The role-headed rows and columns of a document's tables, from line geometry and the lexicon's role labels.

    A role cell (:func:`_role_cell`) that is the leftmost box of its row heads the boxes right of it on that row
    (centres aligned) when none of them names a role. Two role cells or more of different roles on one row head
    columns: a line below a cell, overlapping it horizontally by half the narrower width, is in that cell's column
    while no line between names a role and its own row names none."""
    row: dict[LineRef, LineRef] = {}
    column: dict[LineRef, LineRef] = {}
    pages: dict[int, list[tuple[int, np.ndarray, set[str], Optional[str]]]] = {}
    by_page: dict[int, list[tuple[int, TextLine]]] = {}
    horizontal: dict[int, list[LineBox]] = {}  # per page, its horizontal lines' boxes, indexed by line (label_words)
    for p, li, ln in doc.flat:
        by_page.setdefault(p, []).append((li, ln))
    for p, page_lines in by_page.items():
        # a label wrapped inside its cell (身故保险金受益 / 人：) names its role over its whole extent; only a role
        # cell read whole on its line heads a row or column
        # rows and columns are read with the page's skew undone
        boxes = [replace(b, page=p) for b in page_boxes([ln for _, ln in page_lines])]
        horizontal[p] = [replace(b, index=li) for b, (li, ln) in zip(boxes, page_lines) if not ln.vertical]
        merged, absorbed = merge_wrapped_labels(boxes, lexicon.pattern)
        head_of = {o[0]: h.index for h in merged if h.index not in absorbed for o in h.origin}
        for k, (li, ln) in enumerate(page_lines):
            m = merged[head_of[k]]  # a wrapped label's tail line takes its head's text and extent
            box = np.array([m.x0, m.y0, m.x1, m.y1], np.float32)
            cell = _role_cell(ln.text, lexicon) if m.raw == ln.text else None
            pages.setdefault(p, []).append((li, box, _roles_in(m.raw, lexicon), cell))
    for p, lines in pages.items():
        mates = {m[0]: [o for o in lines if o[0] != m[0] and _aligned(m[1], o[1])] for m in lines}
        for li, box, _, cell in lines:
            if cell is None or any(o[1][0] < box[0] for o in mates[li]):
                continue
            right = [o for o in mates[li] if o[1][0] > box[0]]
            if right and not any(o[2] for o in right):
                for o in right:
                    row[(p, o[0])] = (p, li)
                row[(p, li)] = (p, li)
        headers = [m for m in lines if m[3] is not None
                   and len({m[3]} | {o[3] for o in mates[m[0]] if o[3] is not None}) >= 2]
        role_lines = [m for m in lines if m[2]]
        for li, box, roles, _ in lines:
            if roles or any(o[2] for o in mates[li]):
                continue
            width = box[2] - box[0]
            best = None
            for h in headers:
                hb = h[1]
                if hb[3] > box[1] + 0.3 * (box[3] - box[1]):
                    continue
                if min(hb[2], box[2]) - max(hb[0], box[0]) < 0.5 * max(1.0, min(width, hb[2] - hb[0])):
                    continue
                if best is None or hb[3] > best[1][3]:
                    best = h
            if best is None:
                continue
            top, bottom = best[1][3], box[1]
            if any(top < (m[1][1] + m[1][3]) / 2 < bottom for m in role_lines):
                continue
            column[(p, li)] = (p, best[0])
    words = label_words(doc, horizontal)
    counts = Counter(words.values())
    return RoleCells(row, column, words, frozenset(w for w in counts if _new_word(w, lexicon)),
                     frozenset(w for w, n in counts.items() if n > 1))


def _new_word(word: str, lexicon: Lexicon) -> bool:
    """A role word that names no role the lexicon's labels or the scorer's role heads (投保, 被保, 受益: ``ROLE_OF``)
    know (契约人, 保险对象, 领款人; not 投保方, 被保对象)."""
    return word not in ROLE_WORDS and not _roles_in(word, lexicon) and not any(h in word for h in ROLE_OF)


def _num(v: Optional[str]) -> Optional[float]:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def _birth_dates(chosen: dict[str, Candidate]) -> set[str]:
    """The birth dates (YYYY-MM-DD) that the chosen valid ID numbers spell (:func:`id_birth_date`)."""
    out = set()
    for key in ("policyholder_id_number", "insured_id_number"):
        c = chosen.get(key)
        if c is not None and c.value and not c.issues and (born := id_birth_date(c.value)) is not None:
            out.add(born.isoformat())
    return out


def consistent(chosen: dict[str, Candidate], cells: Optional[RoleCells] = None, added: Optional[str] = None) -> bool:
    """Whether the chosen candidates can stand together (values that failed to normalize are not compared).
    ``added``: the one field whose candidate joined a consistent set, so only the pairs with it are compared."""
    v = {k: c.value for k, c in chosen.items()}
    issue, eff, exp = v.get("issue_date"), v.get("effective_date"), v.get("expiry_date")
    if issue and eff and issue > eff:
        return False
    if eff and exp and not eff < exp:
        return False
    if issue and exp and not issue < exp:
        return False
    if (issue or eff or exp) and {issue, eff, exp} & _birth_dates(chosen):
        return False  # a policy date is no one's birth date as an ID number spells it (出生日期 under a new wording)
    prem, total = _num(v.get("premium")), _num(v.get("sum_insured"))
    if prem is not None and total is not None and not prem < total:
        return False
    ph_id, in_id = chosen.get("policyholder_id_number"), chosen.get("insured_id_number")
    one_person = (ph_id is not None and in_id is not None and bool(ph_id.value) and ph_id.value == in_id.value
                  and not ph_id.issues)  # one valid ID number: the policyholder insures themself
    if one_person:
        a, b = v.get("policyholder_name"), v.get("insured_name")
        if a and b and a != b:
            return False
    # the insured's name is the policyholder's where they are one person, printed under the insured's label or not
    insured = v.get("insured_name") or (v.get("policyholder_name") if one_person else None)
    beneficiary = v.get("beneficiary_name")
    if insured and beneficiary and insured == beneficiary:
        return False  # a death benefit is never paid to the insured: the beneficiary is someone else
    keys = list(chosen)
    pairs = ((added, b) for b in keys if b != added) if added is not None else (
        (a, b) for i, a in enumerate(keys) for b in keys[i + 1:])
    for a, b in pairs:
        if not may_share_span(a, b) and chosen[a].span & chosen[b].span:
            return False
        if cells is not None and _different_people(a, b, chosen) and (
                cells.same_cell(chosen[a], chosen[b]) or _one_word(a, b, chosen, cells)):
            return False
        if cells is not None and _two_words(a, b, chosen, cells):
            return False
    return True


# one person's name and ID number: their labels name the person with one role word (契约人 / 契约人证件号码)
_IDENTITY = frozenset({frozenset({"policyholder_name", "policyholder_id_number"}),
                       frozenset({"insured_name", "insured_id_number"})})


def _two_words(a: str, b: str, chosen: dict[str, Candidate], cells: RoleCells) -> bool:
    """Whether one person's name and ID number follow labels of two unlike role words that no list knows
    (:meth:`RoleCells.two_new_words`), neither being a value two people share: a person's labels share their role
    word, so one of the two values is another person's (the name under 领款人 beside the ID number under
    保险对象证件号, where 保险对象 labels a name too). Words the lexicon knows are left to the scorer (a page may print
    投保客户 beside 投保人证件号码)."""
    return (frozenset({a, b}) in _IDENTITY and cells.two_new_words(chosen[a], chosen[b])
            and not _serves_two(a, chosen) and not _serves_two(b, chosen))


def _different_people(a: str, b: str, chosen: dict[str, Candidate]) -> bool:
    """Fields of two roles, not one printed value shared by both (投保人/被保险人: 张三)."""
    ra, rb = field_role(a), field_role(b)
    if ra is None or rb is None or ra == rb:
        return False
    return not (may_share_span(a, b) and chosen[a].span & chosen[b].span)


def _one_word(a: str, b: str, chosen: dict[str, Candidate], cells: RoleCells) -> bool:
    """Whether two fields' values follow labels of one role word, neither being a value two people share."""
    return (cells.same_word(chosen[a], chosen[b]) and not _serves_two(a, chosen)
            and not _serves_two(b, chosen))


def _serves_two(key: str, chosen: dict[str, Candidate]) -> bool:
    """Whether ``key``'s value is one printed value two people's fields share (a self-insured policy's name, printed
    once under the policyholder's label): its label's role word then names only one of them."""
    return any(k != key and may_share_span(key, k) and c.span & chosen[key].span for k, c in chosen.items())


def _options(scored: Sequence[Scored]) -> dict[str, list[Scored]]:
    by_key: dict[str, dict[tuple, Scored]] = {}
    for s in scored:
        k = (s.candidate.value, s.candidate.chars)
        cur = by_key.setdefault(s.candidate.key, {}).get(k)
        if cur is None or s.p > cur.p:
            by_key[s.candidate.key][k] = s
    return {key: sorted(d.values(), key=lambda s: -s.p)[:TOP_K] for key, d in by_key.items()}


def assign(scored: Sequence[Scored], cells: Optional[RoleCells] = None,
           carried: frozenset[str] = frozenset()) -> dict[str, Optional[Scored]]:
    """The best consistent assignment: field -> chosen candidate (or None), for every field with a candidate;
    with ``cells`` (:func:`role_cells`), two people's fields never come from one role-headed row or column.
    ``carried``: the fields that are rarely really absent, whose "no value" scores at most log(CARRIED_P)."""
    options = _options(scored)
    keys = sorted(options, key=lambda k: -options[k][0].p)
    choices: list[list[tuple[float, Optional[Scored]]]] = []
    for k in keys:
        top = options[k][0].p
        empty = ABSENT_ODDS * max(_EPS, 1.0 - top)
        if k in carried:
            empty = min(empty, CARRIED_P)
        row = [(math.log(max(_EPS, s.p)), s) for s in options[k]] + [(math.log(empty), None)]
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
                if not consistent(chosen, cells, added=keys[i]):  # the fields before it stand together
                    del chosen[keys[i]]
                    continue
            picked[i] = s
            search(i + 1, score + s_log)
            picked[i] = None
            chosen.pop(keys[i], None)

    search(0, 0.0)
    return best
