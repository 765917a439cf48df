"""Roles for bare labels: whose 姓名, 证件号码 or 联系电话 a label is, from the role words around it."""
from __future__ import annotations

from typing import Optional

from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.lines import same_row
from stages.extraction.rules.occurrences import LabelHit


def _role_of_line(doc: PreparedDocument, li: int, before: Optional[int] = None) -> Optional[str]:
    """Role of the last role-bearing label in line ``li`` (before compact position ``before``: then role words
    inside sentences count too)."""
    role = None
    for o in (doc.all_hits[li] if before is not None else doc.hits[li]):
        if before is not None and o.start >= before:
            break
        if o.label.role is not None:
            role = o.label.role
    return role


def _is_role_only(doc: PreparedDocument, li: int) -> bool:
    """The line is a role word alone (a merged row-header cell such as 投保人)."""
    hits = doc.hits[li]
    return (len(hits) == 1 and hits[0].label.role is not None and hits[0].start == 0
            and hits[0].value_start >= len(doc.lines[li].comp))


def resolve_role(doc: PreparedDocument, o: LabelHit) -> tuple[Optional[str], bool]:
    """Role in force at a bare label: ``(role, near)``; ``near`` when it came from the same line or row
    (or a merged cell to the left) rather than from earlier lines."""
    line = doc.lines[o.line]
    role = _role_of_line(doc, o.line, o.start)
    if role:
        return role, True
    prev = doc.paragraph_prev(o.line)
    if prev is not None:  # …，投保 / 人通讯地址：…，联系电话：…
        lex = doc.lexicon
        roles = [lex.labels[m.group()].role for m in lex.pattern.finditer(doc.lines[prev].comp + line.comp[:o.start])]
        roles = [r for r in roles if r is not None]
        if roles:
            return roles[-1], True
    lefts = sorted((ln for ln in doc.live if ln is not line and same_row(line, ln) and ln.x1 <= line.x0 + 1),
                   key=lambda ln: -ln.x1)
    for ln in lefts:
        role = _role_of_line(doc, ln.index)
        if role:
            return role, True
    # a merged row-header cell (投保人 spanning several table rows): left of the whole row, a row of its own with
    # content to its right (a section title stands alone on its row)
    row_x0 = min([line.x0] + [ln.x0 for ln in doc.live if same_row(line, ln)])
    merged = [ln for ln in doc.live if ln.page == line.page and ln.x1 <= row_x0 + 1 and _is_role_only(doc, ln.index)
              and abs(ln.cy - line.cy) <= 4 * line.height
              and any(other is not ln and same_row(ln, other) and other.x0 >= ln.x1 - 1 for other in doc.live)]
    if merged:
        nearest = min(merged, key=lambda ln: abs(ln.cy - line.cy))
        return _role_of_line(doc, nearest.index), True
    for r in range(doc.rank[o.line] - 1, -1, -1):
        li = doc.order[r]
        if doc.lines[li].page != line.page:
            break
        role = _role_of_line(doc, li)
        if role:
            return role, False
    return None, False
