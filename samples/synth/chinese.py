"""Chinese numerals: financial capitals for amounts (大写金额) and 〇-style dates."""
from __future__ import annotations

import datetime as dt

_CAPITAL_DIGITS = "零壹贰叁肆伍陆柒捌玖"
_CAPITAL_UNITS = ("", "拾", "佰", "仟")
_SECTION_UNITS = ("", "万", "亿", "万亿")
_DATE_DIGITS = "〇一二三四五六七八九"


def integer_to_capital(value: int) -> str:
    """``1005000`` -> ``壹佰万零伍仟``; one 零 stands for any run of zeros between non-zero digits."""
    if value < 0:
        raise ValueError("negative amount")
    if value == 0:
        return "零"
    digits = str(value)
    out: list[str] = []
    zero_pending = False
    n = len(digits)
    for i, ch in enumerate(digits):
        pos = n - 1 - i
        d = int(ch)
        if d == 0:
            zero_pending = bool(out)
        else:
            if zero_pending:
                out.append("零")
                zero_pending = False
            out.append(_CAPITAL_DIGITS[d] + _CAPITAL_UNITS[pos % 4])
        if pos % 4 == 0 and pos > 0:
            section = digits[max(0, i - 3): i + 1]
            if int(section) != 0:
                out.append(_SECTION_UNITS[pos // 4])
    return "".join(out)


def amount_to_capital(cents: int, *, yuan_char: str = "元", always_zheng: bool = False) -> str:
    """Financial capitals of an amount in cents: ``325650`` -> ``叁仟贰佰伍拾陆元伍角``.

    ``整`` follows a whole-yuan amount (and a jiao amount when ``always_zheng``).
    """
    yuan, rest = divmod(cents, 100)
    jiao, fen = divmod(rest, 10)
    text = integer_to_capital(yuan) + yuan_char if yuan else ""
    if jiao == 0 and fen == 0:
        return text + "整"
    if jiao:
        text += _CAPITAL_DIGITS[jiao] + "角"
        if fen:
            text += _CAPITAL_DIGITS[fen] + "分"
        elif always_zheng:
            text += "整"
    else:
        text += ("零" if yuan else "") + _CAPITAL_DIGITS[fen] + "分"
    return text


def small_number(n: int) -> str:
    """1..99 in everyday numerals: 1 -> 一, 10 -> 十, 21 -> 二十一."""
    if not 0 < n < 100:
        raise ValueError(n)
    tens, ones = divmod(n, 10)
    if tens == 0:
        return _DATE_DIGITS[ones]
    head = "" if tens == 1 else _DATE_DIGITS[tens]
    return head + "十" + (_DATE_DIGITS[ones] if ones else "")


def date_to_chinese(date: dt.date) -> str:
    """``2026-01-01`` -> ``二〇二六年一月一日``."""
    year = "".join(_DATE_DIGITS[int(c)] for c in f"{date.year:04d}")
    return f"{year}年{small_number(date.month)}月{small_number(date.day)}日"
