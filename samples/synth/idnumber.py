"""Resident identity numbers (GB 11643-1999): 6-digit region, 8-digit birth date, 3-digit sequence, check char."""
from __future__ import annotations

import datetime as dt

WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
CHECK_CHARS = "10X98765432"


def check_char(body17: str) -> str:
    """The 18th character for a 17-digit body."""
    if len(body17) != 17 or not body17.isdigit():
        raise ValueError(f"need 17 digits, got {body17!r}")
    return CHECK_CHARS[sum(int(c) * w for c, w in zip(body17, WEIGHTS)) % 11]


def make_id(region: str, birth: dt.date, sequence: int, male: bool) -> str:
    """An 18-character ID; the sequence's last digit is odd for men and even for women."""
    seq = sequence % 1000
    if (seq % 2 == 1) != male:
        seq = seq + 1 if seq % 10 != 9 else seq - 1
    body = f"{region}{birth:%Y%m%d}{seq:03d}"
    return body + check_char(body)


def is_valid_id(value: str) -> bool:
    """Checksum, digits and birth date of an 18-character ID (upper-case ``X`` only)."""
    if len(value) != 18 or not value[:17].isdigit():
        return False
    try:
        dt.date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return check_char(value[:17]) == value[17]
