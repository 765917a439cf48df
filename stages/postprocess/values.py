"""Field value normalization (docs/schema.md, "Fields"): text as read -> normalized value plus machine-readable issues.

Every function here is pure: it takes the text (and, where the answer depends on it, ``today``) and
returns a :class:`Normalized`. Nothing raises on bad input; a value that cannot be made is ``None``
with an issue saying why.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Optional, Sequence

from stages.postprocess import surnames

# ---------------------------------------------------------------------------------------------------------------------
# Result type and issue codes

ISSUE_EMPTY = "empty_value"
ISSUE_DATE = "unparseable_date"
ISSUE_YEAR_RESTORED = "year_digit_restored"  # a 二 or 〇 the recognizer dropped from a Chinese year was put back
ISSUE_AMOUNT = "unparseable_amount"
ISSUE_AMOUNT_MISMATCH = "amount_mismatch"
ISSUE_AMOUNT_GROUPING = "amount_grouping"  # thousands separators not every three digits: a digit misread or lost
ISSUE_AMOUNT_CUT_OFF = "amount_cut_off"  # the printed amount goes on past where its parse stopped: a character misread
ISSUE_ID_FORMAT = "id_format"
ISSUE_ID_CHECKSUM = "id_checksum"
ISSUE_ID_BIRTHDATE = "id_birthdate"
ISSUE_PHONE = "phone_format"
ISSUE_NAME_CUT = "name_incomplete"  # a person's name that is a compound surname alone: its given name went unread
ISSUE_COMPANY_CUT = "company_incomplete"  # a company name whose trade name has fewer than two characters

# Issues that record a repair the normaliser made before the value validated: they stay in a field's ``issues`` for a
# person to see, but do not make the field invalid; the routing weighs them through the field's confidence
# (docs/schema.md, Issue codes). Every other issue is a defect.
REPAIR_NOTES: frozenset[str] = frozenset({ISSUE_YEAR_RESTORED})


def defects(issues: Sequence[str]) -> tuple[str, ...]:
    """The issues that make a field invalid: all but the repair notes."""
    return tuple(i for i in issues if i not in REPAIR_NOTES)


@dataclass(frozen=True)
class Normalized:
    """A normalized value (``None`` when none could be made) and the issues found on the way."""

    value: Optional[str]
    issues: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.value is not None and not self.issues


# ---------------------------------------------------------------------------------------------------------------------
# Shared text helpers

_WS_RE = re.compile(r"\s+")
# punctuation that OCR leaves around a value (label colons, leaders, trailing commas/full stops)
_EDGE_PUNCT = ":;,.，。；：、|_…·-—=*"


def nfkc(text: str) -> str:
    """NFKC-normalize (full-width digits/letters/punctuation become ASCII)."""
    return unicodedata.normalize("NFKC", text)


def compact(text: str) -> str:
    """NFKC and remove all whitespace."""
    return _WS_RE.sub("", nfkc(text))


def _strip_edges(text: str) -> str:
    """Edge punctuation stripped, and a bracket at either edge that nothing inside closes or opens (a speck or a
    neighbour's bracket read into the value: （金瑞重大疾病保险(2024版))."""
    text = text.strip(_EDGE_PUNCT + " ")
    while text.startswith("(") and text.count("(") > text.count(")"):
        text = text[1:].strip(_EDGE_PUNCT + " ")
    while text.endswith(")") and text.count(")") > text.count("("):
        text = text[:-1].strip(_EDGE_PUNCT + " ")
    return text


_DIGIT_LOOKALIKES = {"O": "0", "o": "0", "D": "0", "l": "1", "I": "1", "|": "1"}
_LOOKALIKE_RE = re.compile(r"(?:(?<=[0-9])|(?<=[0-9][,.]))[OoDlI|]|[OoDlI|](?=[,.]?[0-9])")


def fix_digit_lookalikes(text: str) -> str:
    """OCR letter/digit confusions next to a digit (or a digit and a ``,``/``.``): ``2O26`` -> ``2026``,
    ``l38`` -> ``138``, ``5OO,OOO.OO`` -> ``500,000.00`` (repeated until stable). Only for values that are digits by
    nature (IDs, phones, amounts)."""
    while True:
        fixed = _LOOKALIKE_RE.sub(lambda m: _DIGIT_LOOKALIKES[m.group()], text)
        if fixed == text:
            return fixed
        text = fixed


# ---------------------------------------------------------------------------------------------------------------------
# Dates

_CN_DATE_DIGITS = {"〇": 0, "○": 0, "零": 0, "O": 0, "o": 0, "一": 1, "二": 2, "三": 3, "四": 4,
                   "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
# OCR confusions that are safe to undo inside a date (1:1, so spans stay valid)
_DATE_CONFUSABLES = str.maketrans({"O": "0", "o": "0", "l": "1", "I": "1", "|": "1", "曰": "日"})

# the separators of an Arabic date, after the year and after the month; one of two dots may be read as a comma
# (2024,08.21, 2024.08,21), never both: 2024,08,21 is no date (shared with the learned date detector)
AR_DATE_SEP_YEAR = r"(?:年|/|-|(?P<dot>\.)|,(?=\s*\d{1,2}\s*\.))"
AR_DATE_SEP_MONTH = r"(?:月|/|-|\.|(?(dot),|(?!)))"
# a day may be glued to a following time when spaces are lost: 2026-01-0100:00, 2021/6/130时起, 2021/6/224时止
_AR_DATE = (rf"(?<!\d)(?P<y>\d{{4}})\s*{AR_DATE_SEP_YEAR}\s*(?P<m>\d{{1,2}})\s*{AR_DATE_SEP_MONTH}\s*"
            r"(?P<d>\d{1,2})(?:(?!\d)|(?=\d{1,2}:\d\d)|(?=(?:0|00|24)(?:时|点)))(?:\s*日)?")
_CN_D = "[〇○零一二三四五六七八九]"
# a year of Chinese digits may hold Arabic ones: OCR reads 〇 as 0 (二0四四年七月十二日), and a faint 一 (one
# horizontal stroke) as a dash or a dot (二〇·九年, 二〇-九年); between Chinese digits of a year those mean 一
_ONE_AS_STROKE = "-—–_·"
_CN_YEAR_D = f"[〇○零一二三四五六七八九0-9{_ONE_AS_STROKE}]"
# one of the leading 二〇 is also dropped outright -- the thin 〇 (二一八年 for 二〇一八年) or the 二 before it (〇一九年):
# three Chinese digits that are not after a digit
_CN_YEAR_SHORT = (r"(?<![〇○零一二三四五六七八九0-9])(?:二\s*[一二三四五六七八九]|[〇○零]\s*[〇○零一二三四五六七八九])"
                  r"\s*[〇○零一二三四五六七八九]")
_CN_YEAR = rf"(?:{_CN_YEAR_D}\s*){{3}}{_CN_YEAR_D}|{_CN_YEAR_SHORT}"
_CN_MONTH = r"元|十\s*[一二]?|[一二三四五六七八九]"
_CN_DAY = r"[二三]?\s*十\s*[一二三四五六七八九]?|[一二三四五六七八九]"
_CN_DATE = rf"(?P<cy>{_CN_YEAR})\s*年\s*(?P<cm>{_CN_MONTH})\s*月\s*(?P<cd>{_CN_DAY})\s*[日号]"
_DATE_RE = re.compile(rf"{_AR_DATE}|{_CN_DATE}")
_COMPACT_DATE_RE = re.compile(r"^(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})(?:\D.*)?$")

MIN_YEAR = 1900
MAX_YEAR = 2199


def _cn_small_number(text: str) -> int:
    """一..九, 十, 十五, 二十, 三十一 (and 元 = 1 for 元月)."""
    text = _WS_RE.sub("", text)
    if text == "元":
        return 1
    if "十" not in text:
        return _CN_DATE_DIGITS[text]
    tens, _, ones = text.partition("十")
    return (_CN_DATE_DIGITS[tens] if tens else 1) * 10 + (_CN_DATE_DIGITS[ones] if ones else 0)


def date_spans(text: str) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` of every date-looking substring of ``text`` (Arabic or Chinese numerals).

    ``text`` should already be NFKC; whitespace around separators is tolerated; spans index into it unchanged.
    """
    return tuple(m.span() for m in _DATE_RE.finditer(text.translate(_DATE_CONFUSABLES)))


def _make_date(y: int, m: int, d: int) -> Optional[date]:
    if not MIN_YEAR <= y <= MAX_YEAR:
        return None
    try:
        return date(y, m, d)
    except ValueError:
        return None


def parse_date(text: str) -> Optional[date]:
    """The first printed date in ``text`` as a :class:`datetime.date`, or ``None``.

    Whitespace inside numbers (``20 26年``) is tolerated only when the text has no date otherwise.
    """
    return _parse_date(text)[0]


def _parse_date(text: str) -> tuple[Optional[date], bool]:
    """:func:`parse_date`, and whether a dropped digit was put back into a three-digit Chinese year (二一八, 〇一八 ->
    2018)."""
    spaced = nfkc(text).translate(_DATE_CONFUSABLES)
    s = _WS_RE.sub("", spaced)
    m = _DATE_RE.search(spaced) or _DATE_RE.search(s)
    if m is None:
        c = _COMPACT_DATE_RE.match(s)
        if c is None:
            return None, False
        return _make_date(int(c["y"]), int(c["m"]), int(c["d"])), False
    if m["y"] is not None:
        return _make_date(int(m["y"]), int(m["m"]), int(m["d"])), False
    cy = _WS_RE.sub("", m["cy"])
    if any(ch in _ONE_AS_STROKE for ch in cy) and (not any(ch in _CN_DATE_DIGITS for ch in cy) or cy[0] in _ONE_AS_STROKE):
        return None, False  # a dash stands for 一 only among Chinese digits, never first
    restored = len(cy) == 3
    if restored:
        cy = "二〇" + cy[1:]  # 二X Y and 〇X Y alike
    year = int("".join(ch if ch.isdigit() else "1" if ch in _ONE_AS_STROKE else str(_CN_DATE_DIGITS[ch]) for ch in cy))
    return _make_date(year, _cn_small_number(m["cm"]), _cn_small_number(m["cd"])), restored


def normalize_date(text: str) -> Normalized:
    """``2026年1月1日零时起`` / ``2026/1/1`` / ``二〇二六年元月十五日`` ... -> ``2026-01-01`` (the printed date). A year
    whose dropped 〇 or 二 was put back keeps the issue ``year_digit_restored``, a repair note (REPAIR_NOTES): the
    value is not ``valid`` here, so re-decoding looks for a reading without it, but a field that keeps it stays valid."""
    if not compact(text):
        return Normalized(None, (ISSUE_EMPTY,))
    d, restored = _parse_date(text)
    if d is None:
        return Normalized(None, (ISSUE_DATE,))
    return Normalized(d.isoformat(), (ISSUE_YEAR_RESTORED,) if restored else ())


# ---------------------------------------------------------------------------------------------------------------------
# Amounts

CAPITAL_NUMERALS = "零壹贰叁肆伍陆柒捌玖拾佰仟万亿元角分整圆"

# 参, the simplified form of 參, stands for 叁 in some hands and is what OCR often reads for it (18 lines of the
# dev sets' OCR: 捌拾肆万参仟参佰玖拾肆元); a lone 参 is a word's (参考, 参保), not an amount
_AMOUNT_DIGITS = {"零": 0, "〇": 0, "壹": 1, "一": 1, "贰": 2, "貳": 2, "二": 2, "两": 2, "叁": 3, "參": 3, "参": 3,
                  "三": 3, "肆": 4, "四": 4, "伍": 5, "五": 5, "陆": 6, "陸": 6, "六": 6, "柒": 7, "七": 7,
                  "捌": 8, "八": 8, "玖": 9, "九": 9}
_SMALL_UNITS = {"拾": 10, "十": 10, "佰": 100, "百": 100, "仟": 1000, "千": 1000}
_BIG_UNITS = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
_YUAN = "元圆圓"
_END_MARKS = "整正"
_CN_AMOUNT_CHARS = "".join(_AMOUNT_DIGITS) + "".join(_SMALL_UNITS) + "".join(_BIG_UNITS) + _YUAN + "角分" + _END_MARKS
_CN_AMOUNT_RUN = re.compile(f"[{_CN_AMOUNT_CHARS}]+")
_CN_NUMERIC = set(_AMOUNT_DIGITS) | set(_SMALL_UNITS)
# a number starts after no digit and no decimal point: a dot after text is a leader (保费……1,000元), not a
# decimal point
NUMBER_START = r"(?<!\d)(?<!\d\.)"
_ARABIC_AMOUNT = re.compile(NUMBER_START + r"(?P<num>\d[\d,]*(?:\.\d+)?)(?P<mult>万|萬|亿|億)?")
# a thousands comma that OCR read as a full stop: "23.392.70" (a dot, 3 digits, then another separator) or
# "242.000元" / "1.090.000" (the last group has exactly 3 digits: yuan amounts have at most 2 decimals; not before
# 万/亿: 1.235万); the amount detector (stages/extraction/learned/detectors.py) proposes the same spans
GROUPED_NUMBER = NUMBER_START + r"(?<!,)\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?(?![\d.,]*\d)(?!\s*[万萬亿億])"
_GROUPED_NUMBER = re.compile(GROUPED_NUMBER)


# several dots before a last group of 1-2 digits: all but the last were thousands separators, whatever the group
# sizes OCR left (2.300000.00 for 2,300,000.00)
_MANY_DOTS = re.compile(NUMBER_START + r"(?<!,)\d+(?:\.\d+){2,}")


def _fix_thousands_dots(text: str) -> str:
    def many(m: re.Match[str]) -> str:
        num = m.group()
        head, _, last = num.rpartition(".")
        return head.replace(".", "") + "." + last if len(last) <= 2 else num.replace(".", "")
    text = _MANY_DOTS.sub(many, text)
    def fix(m: re.Match[str]) -> str:
        num = m.group()
        tail = re.search(r"[.,]\d{1,2}$", num)
        head = num[:tail.start()] if tail else num
        return head.replace(".", ",") + (tail.group().replace(",", ".") if tail else "")
    return _GROUPED_NUMBER.sub(fix, text)
_CENT = Decimal("0.01")


def _parse_cn_integer(text: str) -> Optional[int]:
    """Integer part of a Chinese amount (``叁仟贰佰伍拾陆``, ``壹万零伍佰``, ``拾万``) or ``None`` if malformed."""
    total = wan = section = 0
    digit: Optional[int] = None
    prev = ""  # kind of the previous token: "", "zero", "ten" (拾) or "unit" (佰 仟 万 亿)
    ambiguous = False  # a trailing digit right after 佰/仟/万/亿 (壹佰伍) is ambiguous without 零
    last_small = 10**9  # small units must decrease within a section
    seen_wan = False
    for ch in text:
        if ch in _AMOUNT_DIGITS:
            value = _AMOUNT_DIGITS[ch]
            if value == 0:
                if digit is not None:
                    return None
                prev = "zero"
                continue
            if digit is not None:
                return None  # two digits in a row (伍伍)
            ambiguous = prev == "unit"
            digit = value
        elif ch in _SMALL_UNITS:
            unit = _SMALL_UNITS[ch]
            if unit >= last_small:
                return None
            if digit is None:
                if unit != 10:
                    return None
                digit = 1  # 拾万 = 100000
            section += digit * unit
            digit, last_small, prev = None, unit, ("ten" if unit == 10 else "unit")
        else:  # big unit (万 / 亿)
            big = _BIG_UNITS.get(ch)
            if big is None:
                return None
            if big == 10**4:
                high = section + (digit or 0)
                if high == 0 or seen_wan:
                    return None
                wan += high * big
                seen_wan = True
            else:
                high = wan + section + (digit or 0)
                if high == 0:
                    return None
                total += high * big
                wan, seen_wan = 0, False
            section, digit, last_small, prev = 0, None, 10**9, "unit"
    if digit is not None and ambiguous:
        return None
    return total + wan + section + (digit or 0)


def _parse_cn_fraction(text: str) -> Optional[int]:
    """``伍角``, ``零伍分``, ``伍角伍分`` -> fen (1/100 yuan), or ``None`` if malformed."""
    fen = 0
    digit: Optional[int] = None
    seen_jiao = seen_fen = False
    for ch in text:
        if ch in _AMOUNT_DIGITS:
            value = _AMOUNT_DIGITS[ch]
            if value == 0:
                if digit is not None:
                    return None
                continue
            if digit is not None:
                return None
            digit = value
        elif ch == "角":
            if digit is None or seen_jiao or seen_fen:
                return None
            fen += digit * 10
            digit, seen_jiao = None, True
        elif ch == "分":
            if digit is None or seen_fen:
                return None
            fen += digit
            digit, seen_fen = None, True
        elif ch in _END_MARKS:
            continue
        else:
            return None
    return None if digit is not None else fen


def _capital_run(text: str) -> Optional[re.Match[str]]:
    """The first run of capital-amount characters in ``text`` that holds a numeral (not a lone 参)."""
    return next((run for run in _CN_AMOUNT_RUN.finditer(compact(text))
                 if set(run.group()) & _CN_NUMERIC and run.group() != "参"), None)


# one character that is no amount character, then more numerals or units: a numeral or 圆 misread inside a capital
# amount (伍拾贰万别仟元整, 柒拾万零叁拾玖园捌角肆分), which the parse stops at
_CN_CUT_OFF = re.compile(f"[\u4e00-\u9fff](?=[{_CN_AMOUNT_CHARS}]*[{''.join(_AMOUNT_DIGITS)}{''.join(_SMALL_UNITS)}"
                         f"{''.join(_BIG_UNITS)}角分])")


def _capital_cut_off(m: re.Match[str]) -> bool:
    """Whether the capital amount ``m`` stops, before its 元 or 整, at one misread character with more of it after."""
    run = m.group()
    if any(ch in _YUAN for ch in run) or run.endswith(tuple(_END_MARKS)):
        return False
    return _CN_CUT_OFF.match(m.string, m.end()) is not None  # its lookahead holds the rest of the amount


def parse_chinese_amount(text: str) -> Optional[Decimal]:
    """A Chinese-numeral amount (大写 or 小写): ``人民币伍拾万元整`` -> ``Decimal('500000.00')``; ``None`` if malformed."""
    return _capital_value(_capital_run(text))


def _capital_value(m: Optional[re.Match[str]]) -> Optional[Decimal]:
    if m is None:
        return None
    if not set(m.group()) & set(_AMOUNT_DIGITS) and not set(m.group()) & set(_YUAN + "角分"):
        return None  # a lone unit (拾, 佰万): the rest of the amount was lost, not ten yuan
    s = m.group().rstrip(_END_MARKS)
    yuan_at = next((i for i, ch in enumerate(s) if ch in _YUAN), -1)
    if yuan_at >= 0:
        int_part, frac_part = s[:yuan_at], s[yuan_at + 1:]
    elif "角" in s or "分" in s:
        int_part, frac_part = "", s
    else:
        int_part, frac_part = s, ""
    if not int_part and not frac_part:
        return None
    integer = _parse_cn_integer(int_part) if int_part else 0
    fraction = _parse_cn_fraction(frac_part) if frac_part else 0
    if integer is None or fraction is None:
        return None
    return (Decimal(integer * 100 + fraction) / 100).quantize(_CENT)


def _arabic_match(text: str) -> Optional[re.Match[str]]:
    return _ARABIC_AMOUNT.search(_fix_thousands_dots(fix_digit_lookalikes(compact(text))))


# separators, then digits or Latin letters, right after the parsed amount: the number goes on past a separator
# OCR doubled or misplaced (29783..80, 59.386.S8), so the digits parsed are not the whole printed amount; cents
# of zeros after a doubled full stop (800000..00) lose nothing
_CUT_OFF = re.compile(r"(?P<sep>[.,，。·]+)(?P<rest>[0-9A-Za-z]+)")


def _cut_off(m: re.Match[str]) -> bool:
    """Whether the amount ``m`` matched goes on past a separator with digits its value does not hold."""
    c = _CUT_OFF.match(m.string, m.end())
    return c is not None and not (set(c["sep"]) <= set(".。") and "." not in m["num"] and set(c["rest"]) == {"0"})


def _grouping_consistent(m: Optional[re.Match[str]]) -> bool:
    """False when the Arabic amount ``m`` has thousands commas out of step with its digits (``1171,455``, ``12,34``,
    ``300,00``): a printed amount never has them, so a digit was misread, added or lost. A group after a comma of six
    or nine digits (``1,500000``) keeps every comma on a multiple of three digits: a comma went unread, which loses
    no digit, so it is in step."""
    if m is None or "," not in m["num"]:
        return True
    groups = m["num"].split(".")[0].rstrip(",").split(",")
    return 1 <= len(groups[0]) <= 3 and all(len(g) >= 3 and len(g) % 3 == 0 for g in groups[1:])


def parse_arabic_amount(text: str) -> Optional[Decimal]:
    """The first Arabic-numeral amount in ``text``: ``¥500,000.00`` / ``1.5万元`` / ``RMB 500000``; ``None`` if none."""
    return _arabic_value(_arabic_match(text))


def _arabic_value(m: Optional[re.Match[str]]) -> Optional[Decimal]:
    if m is None:
        return None
    num = m["num"].replace(",", "").rstrip(".")
    try:
        value = Decimal(num)
    except InvalidOperation:
        return None
    if m["mult"]:
        value *= _BIG_UNITS[m["mult"]]
    return value.quantize(_CENT, rounding=ROUND_HALF_UP)


def format_amount(value: Decimal) -> str:
    """Yuan as a plain decimal string with 2 decimals (never exponent notation)."""
    return f"{value.quantize(_CENT, rounding=ROUND_HALF_UP):f}"


def normalize_amount(text: str) -> Normalized:
    """Amount text -> ``"500000.00"``. Capital and Arabic forms that disagree -> ``amount_mismatch`` (Arabic wins); a
    capital form cut short at a misread character is no check of the Arabic one."""
    if not compact(text):
        return Normalized(None, (ISSUE_EMPTY,))
    m, run = _arabic_match(text), _capital_run(text)  # each found once: the value and the checks read them
    arabic, capital = _arabic_value(m), _capital_value(run)
    if arabic is None and capital is None:
        return Normalized(None, (ISSUE_AMOUNT,))
    # the first amount (Arabic, else capital) goes on past where its parse stopped
    cut_short = _cut_off(m) if m is not None else run is not None and _capital_cut_off(run)
    cut = (ISSUE_AMOUNT_CUT_OFF,) if cut_short else ()
    if arabic is None:
        assert capital is not None
        return Normalized(format_amount(capital), cut)
    if run is not None and _capital_cut_off(run):
        capital = None  # cut short at a misread character (伍拾陆方捌仟…): its part is no reading of the amount
    issues = (ISSUE_AMOUNT_MISMATCH,) if capital is not None and capital != arabic else ()
    if not _grouping_consistent(m):
        issues += (ISSUE_AMOUNT_GROUPING,)
    return Normalized(format_amount(arabic), issues + cut)


# ---------------------------------------------------------------------------------------------------------------------
# Resident ID numbers (GB 11643-1999)

ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
ID_CHECK_CHARS = "10X98765432"
_ID_RE = re.compile(r"^\d{17}[\dX]$")


def id_check_char(first17: str) -> str:
    """The GB 11643 check character for the first 17 digits."""
    total = sum(int(ch) * w for ch, w in zip(first17, ID_WEIGHTS, strict=True))
    return ID_CHECK_CHARS[total % 11]


def id_birth_date(id_number: str) -> Optional[date]:
    """Birth date encoded in characters 7-14 of an 18-character ID, or ``None`` if not a calendar date."""
    if len(id_number) != 18 or not id_number[6:14].isdigit():
        return None
    try:
        return date(int(id_number[6:10]), int(id_number[10:12]), int(id_number[12:14]))
    except ValueError:
        return None


def clean_id_number(text: str) -> str:
    """NFKC, whitespace removed, digit look-alikes fixed, upper case (``x`` and ``×`` become ``X``)."""
    return fix_digit_lookalikes(compact(text)).replace("×", "X").upper()


def id_number_issues(id_number: str, today: date) -> tuple[str, ...]:
    """Issues of an already cleaned ID: ``id_format`` alone, or any of ``id_birthdate``, ``id_checksum``."""
    if not _ID_RE.match(id_number):
        return (ISSUE_ID_FORMAT,)
    issues: list[str] = []
    born = id_birth_date(id_number)
    if born is None or born.year < MIN_YEAR or born > today:
        issues.append(ISSUE_ID_BIRTHDATE)
    if id_check_char(id_number[:17]) != id_number[17]:
        issues.append(ISSUE_ID_CHECKSUM)
    return tuple(issues)


def normalize_id_number(text: str, today: date) -> Normalized:
    """``110105 19900307 451x`` -> ``11010519900307451X`` with checksum/birth-date/format issues."""
    cleaned = _strip_edges(clean_id_number(text))
    if not cleaned:
        return Normalized(None, (ISSUE_EMPTY,))
    return Normalized(cleaned, id_number_issues(cleaned, today))


# ---------------------------------------------------------------------------------------------------------------------
# Phones

_PHONE_SEPARATORS = re.compile(r"[\s\-()\.—–]+")
_MOBILE_RE = re.compile(r"^1[3-9]\d{9}$")


def normalize_phone(text: str) -> Normalized:
    """``+86 138-1234-5678`` -> ``13812345678``; anything but an 11-digit mainland mobile -> ``phone_format``."""
    s = fix_digit_lookalikes(_PHONE_SEPARATORS.sub("", nfkc(text))).strip(_EDGE_PUNCT)
    if not s:
        return Normalized(None, (ISSUE_EMPTY,))
    for prefix in ("+86", "0086", "86"):
        if s.startswith(prefix) and len(s) == len(prefix) + 11:
            s = s[len(prefix):]
            break
    if not _MOBILE_RE.match(s):
        return Normalized(s, (ISSUE_PHONE,))
    return Normalized(s)


# ---------------------------------------------------------------------------------------------------------------------
# Names, codes and free text

STATUTORY = "法定"  # the beneficiary value for the statutory heirs
_STATUTORY_HEIRS = ("法定", "法定继承人", "法定受益人", "被保险人的法定继承人", "被保险人法定继承人")
# 法定继承人 with one or two characters misread (法定维承人, 法主继承人): no name starts with 法定 and ends with
# 人, and no name ends with 继承人
_STATUTORY_MISREAD_RE = re.compile(r"^(?:被保险人的?)?(?:法定[\u4e00-\u9fff]{1,2}人|[\u4e00-\u9fff]{1,2}继承人)$")


def normalize_text(text: str) -> Normalized:
    """Free text (insurer, product, address): NFKC, whitespace removed, edge punctuation stripped."""
    s = _strip_edges(compact(text))
    return Normalized(s) if s else Normalized(None, (ISSUE_EMPTY,))


def normalize_name(text: str) -> Normalized:
    """A person's name: NFKC, whitespace removed; a compound surname alone (端木, 欧阳) is no one's whole name, so its
    given name went unread (``name_incomplete``)."""
    n = normalize_text(text)
    if n.value is not None and n.value in surnames.compound():
        return Normalized(n.value, n.issues + (ISSUE_NAME_CUT,))
    return n


_COMPANY_CUT = ("有限公", "责任公", "保险公")  # a company name whose last character (司) was lost


# the line of business that follows an insurer's trade name (and any place name before it)
_LINE_OF_BUSINESS = re.compile("人寿|财产|健康|养老|保险")


def normalize_company(text: str) -> Normalized:
    """An insurer's name as free text, with a last 司 restored where only it is missing (锦程财产保险股份有限公:
    the end of a title lost in a dark band or at the page edge; no company name ends in 公). A trade name of
    fewer than two characters before the line of business (海人寿保险股份有限公司) is none that can be registered
    (企业名称登记管理规定: a trade name is two or more Chinese characters), so a character went unread
    (``company_incomplete``)."""
    n = normalize_text(text)
    if n.value is None:
        return n
    value = n.value + "司" if n.value.endswith(_COMPANY_CUT) else n.value
    business = _LINE_OF_BUSINESS.search(value)
    if business is not None and business.start() < 2:
        return Normalized(value, n.issues + (ISSUE_COMPANY_CUT,))
    return Normalized(value, n.issues)


def normalize_beneficiary(text: str) -> Normalized:
    """A beneficiary: a name, or ``法定`` for 法定 / 法定继承人 / 法定受益人."""
    n = normalize_name(text)
    if n.value is not None and (n.value in _STATUTORY_HEIRS or _STATUTORY_MISREAD_RE.match(n.value)):
        return Normalized(STATUTORY)
    return n


def normalize_code(text: str) -> Normalized:
    """A policy number: NFKC, whitespace removed, upper case."""
    s = _strip_edges(compact(text)).upper()
    return Normalized(s) if s else Normalized(None, (ISSUE_EMPTY,))
