"""Strategy 1b, role tables: attribute headers over rows that each open with a role.

::

              姓名    证件号码     联系电话      通讯地址
    投保人    张三    1101…        138…          北京市…
    被保险人  李四    3101…

The label pass cannot read these: under a header lies a row that opens with a label (the role), which is how a
second header row looks. Here the cell under each attribute header, in a row opened by a role word, is that role's
attribute (the name, ID, phone or address of the policyholder, the insured's name or ID).
"""
from __future__ import annotations

from typing import Optional

from stages.contracts.fields import PERSONS
from stages.extraction.rules.candidates import SCORE_BELOW, RuleCandidate, segments_candidate
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.lexicon import ROLE_FIELDS, ROLE_WORDS
from stages.extraction.rules.lines import LineBox, content_start, same_row
from stages.extraction.rules.wrapping import cell_tail
from stages.extraction.strategies import LABEL_BELOW, LEARNED_PREFIX

_SCORE_ROLE_TABLE = SCORE_BELOW * 0.95  # a bare attribute whose role comes from its row
_MAX_ROW_GAP = 3.0  # line heights between the rows of one table


def _rows(doc: PreparedDocument) -> list[list[LineBox]]:
    """The live boxes as rows (reading order), each left to right."""
    rows: list[list[LineBox]] = []
    for li in doc.order:
        line = doc.lines[li]
        if rows and same_row(rows[-1][0], line):
            rows[-1].append(line)
        else:
            rows.append([line])
    return [sorted(r, key=lambda ln: ln.x0) for r in rows]


def _label_cell(doc: PreparedDocument, line: LineBox) -> Optional[tuple[str, str]]:
    """``("attr", attribute)`` or ``("role", role)`` for a box that is one bare attribute label or one role word and
    nothing else; ``None`` for any other box."""
    hits = doc.hits[line.index]
    if len(hits) != 1 or hits[0].start > content_start(line.comp):
        return None
    hit = hits[0]
    if doc.value_end(line.index, hit.value_start) > hit.value_start:
        return None  # a value follows in the box
    if hit.label.kind == "attr" and hit.label.attr:
        return "attr", hit.label.attr
    if (hit.label.text in ROLE_WORDS or (hit.label.learned and hit.label.attr == "name")) and hit.label.role in PERSONS:
        return "role", hit.label.role
    return None


def _cell_under(row: list[LineBox], header: LineBox) -> Optional[LineBox]:
    """The box of ``row`` that overlaps the header's column most (None if none overlaps it)."""
    best, best_overlap = None, 0.0
    for box in row:
        overlap = min(box.x1, header.x1) - max(box.x0, header.x0)
        if overlap > best_overlap:
            best, best_overlap = box, overlap
    return best


def role_table_candidates(doc: PreparedDocument) -> list[RuleCandidate]:
    """Candidates from tables of attribute headers over role rows (see the module docstring)."""
    out: list[RuleCandidate] = []
    rows = _rows(doc)
    for r, header_row in enumerate(rows):
        headers = [(box, cell[1]) for box in header_row if (cell := _label_cell(doc, box)) and cell[0] == "attr"]
        if len(headers) < 2:
            continue
        left_edge = min(box.x0 for box, _ in headers)
        last = header_row[0]
        for row in rows[r + 1:]:
            if row[0].page != last.page or row[0].y0 - last.y1 > _MAX_ROW_GAP * last.height:
                break
            first = _label_cell(doc, row[0])
            if first is None or first[0] != "role" or row[0].x1 > left_edge + row[0].height:
                if any(_label_cell(doc, box) for box in row):
                    break  # another header row: a new table
                continue  # a line of a wrapped cell
            last = row[0]
            for header, attr in headers:
                key = ROLE_FIELDS.get((first[1], attr))
                cell = _cell_under(row[1:], header)
                if key is None or cell is None or doc.starts_with_label(cell.index):
                    continue
                segments = ((cell.index, 0, doc.value_end(cell.index, 0)),)
                cont = cell_tail(doc, segments[-1]) if key == "policyholder_address" else ()
                how = LEARNED_PREFIX + LABEL_BELOW if doc.hits[row[0].index][0].label.learned else LABEL_BELOW
                c = segments_candidate(doc, key, segments + cont, how, _SCORE_ROLE_TABLE)
                if c is not None:
                    out.append(c)
    return out
