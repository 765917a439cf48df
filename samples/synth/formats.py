"""Printed forms of field values, and the normalized values of docs/schema.md.

Each ``print_*`` function returns the exact text put on the page; ``normalize_*`` and
``amount_value``/``iso_date`` give the value a perfect extractor must return for it.
"""
from __future__ import annotations

import datetime as dt
import random
import unicodedata

from samples.synth.chinese import amount_to_capital, date_to_chinese
from samples.synth.rand import chance

DATE_STYLES: tuple[str, ...] = ("cn", "cn0", "slash", "slash0", "iso", "dot", "hanzi")
AMOUNT_STYLES: tuple[str, ...] = (
    "yen", "yen_fw", "yuan_comma", "wan", "capital_paren", "capital", "capital_small", "plain", "plain_yuan", "rmb",
)
PHONE_STYLES: tuple[str, ...] = ("plain", "dash", "space")
_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def amount_value(cents: int) -> str:
    """Normalized amount: yuan with two decimals, e.g. ``500000.00``."""
    return f"{cents // 100}.{cents % 100:02d}"


def iso_date(date: dt.date) -> str:
    return date.isoformat()


def normalize_text(text: str) -> str:
    """NFKC with all whitespace removed (insurer, product name, address)."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def normalize_policy_number(text: str) -> str:
    return "".join(text.split()).upper()


def _grouped(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d}"


def print_amount(cents: int, style: str, rng: random.Random) -> str:
    """``cents`` in one of :data:`AMOUNT_STYLES` (falls back to ``yen`` where a style cannot express it)."""
    yuan, frac = divmod(cents, 100)
    if style == "yen":
        return "¥" + _grouped(cents)
    if style == "yen_fw":
        return "￥" + _grouped(cents)
    if style == "yuan_comma":
        return (f"{yuan:,}" if frac == 0 else _grouped(cents)) + "元"
    if style == "wan":
        if frac == 0 and yuan % 1000 == 0 and yuan >= 10_000:
            wan = yuan / 10_000
            return (f"{int(wan)}" if yuan % 10_000 == 0 else f"{wan:.1f}") + "万元"
        return "¥" + _grouped(cents)
    capital = amount_to_capital(cents, yuan_char=rng.choice(("元", "元", "圆")))
    if style == "capital_paren":
        sign = rng.choice(("¥", "￥"))
        return f"人民币{capital}（{sign}{_grouped(cents)}）"
    if style == "capital":
        return ("人民币" if chance(rng, 0.7) else "") + capital
    if style == "capital_small":
        return f"{capital}（小写：¥{_grouped(cents)}）"
    if style == "plain":
        return f"{yuan}.{frac:02d}"
    if style == "plain_yuan":
        return (f"{yuan}" if frac == 0 and chance(rng, 0.6) else f"{yuan}.{frac:02d}") + "元"
    if style == "rmb":
        return ("RMB " if chance(rng, 0.4) else "RMB") + _grouped(cents)
    raise ValueError(f"unknown amount style {style!r}")


def print_date(date: dt.date, style: str) -> str:
    y, m, d = date.year, date.month, date.day
    return {
        "cn": f"{y}年{m}月{d}日",
        "cn0": f"{y}年{m:02d}月{d:02d}日",
        "slash": f"{y}/{m}/{d}",
        "slash0": f"{y}/{m:02d}/{d:02d}",
        "iso": f"{y}-{m:02d}-{d:02d}",
        "dot": f"{y}.{m:02d}.{d:02d}",
        "hanzi": date_to_chinese(date),
    }[style]


def date_suffix(role: str, style: str, rng: random.Random) -> str:
    """The time qualifier printed after an effective (``零时起``) or expiry (``二十四时止``) date.

    Digit suffixes (``0时起``) only follow dates ending in a Chinese character (``…日0时起``), never
    bare digits, where ``2026/01/070时起`` would be unreadable.
    """
    ends_in_char = style in ("cn", "cn0")
    if role == "effective":
        options = ("零时起", "0时起", "零时", "") if ends_in_char else ("零时起", "零时", "")
    elif role == "expiry":
        options = ("二十四时止", "24时止", "二十四时", "") if ends_in_char else ("二十四时止", "二十四时", "")
    else:
        return ""
    return rng.choice(options)


def print_phone(phone: str, style: str) -> str:
    if style == "dash":
        return f"{phone[:3]}-{phone[3:7]}-{phone[7:]}"
    if style == "space":
        return f"{phone[:3]} {phone[3:7]} {phone[7:]}"
    return phone


def print_id(id_number: str, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.03:
        return f"{id_number[:6]} {id_number[6:14]} {id_number[14:]}"
    if r < 0.06 and id_number.endswith("X"):
        return id_number[:17] + "x"
    return id_number


def print_name(name: str, rng: random.Random) -> str:
    """Two-character names are sometimes printed with a gap (``张 三``)."""
    if len(name) == 2 and chance(rng, 0.05):
        return name[0] + " " + name[1]
    return name


def print_beneficiary(value: str, rng: random.Random) -> str:
    if value == "法定":
        return rng.choice(("法定继承人", "法定继承人", "法定"))
    return value


def make_policy_number(rng: random.Random, year: int) -> str:
    """A printed policy number in one of several house styles."""
    def digits(n: int) -> str:
        return "".join(rng.choice("0123456789") for _ in range(n))

    def letters(n: int) -> str:
        return "".join(rng.choice(_LETTERS) for _ in range(n))

    r = rng.random()
    if r < 0.2:
        return rng.choice("123456789") + digits(rng.randint(14, 19))
    if r < 0.38:
        return "P" + str(year) + digits(rng.randint(10, 14))
    if r < 0.58:
        return letters(rng.randint(2, 5)) + str(year) + digits(rng.randint(8, 14))
    if r < 0.72:
        return f"{letters(2)}-{year}-{digits(8)}"
    if r < 0.82:
        return f"{year}-{digits(6)}-{digits(6)}"
    if r < 0.9:
        return f"{digits(4)} {digits(4)} {digits(4)} {digits(4)}"
    if r < 0.96:
        return f"{year}{letters(1)}{digits(rng.randint(9, 12))}"
    return f"{letters(1)}{digits(3)}-{digits(4)}-{digits(6)}-{digits(2)}"
