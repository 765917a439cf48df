"""Cross-field checks over normalized values (the ``issues`` of docs/schema.md).

Input is a mapping ``field key -> normalized value`` (ISO dates, cleaned ID numbers; ``None`` or a missing
key means not found). Output holds only the fields that have issues: ``field key -> issue codes``.
Single-field problems (bad checksum, unparseable text) are the normalizers' business; a check here
that cannot read its inputs is skipped.
"""
from __future__ import annotations

from datetime import date
from typing import Callable, Mapping, Optional

from stages.postprocess.values import ISSUE_ID_BIRTHDATE, MIN_YEAR, id_birth_date, id_number_issues

ISSUE_EXPIRY_BEFORE_EFFECTIVE = "expiry_before_effective"
ISSUE_ISSUE_AFTER_EFFECTIVE = "issue_after_effective"
ISSUE_NAME_OF_ANOTHER_ID = "name_of_another_id"  # the insured named as the policyholder, with another valid ID

ID_FIELDS = ("policyholder_id_number", "insured_id_number")

Values = Mapping[str, Optional[str]]
Finding = tuple[str, str]  # (field key, issue code)


def _iso(values: Values, key: str) -> Optional[date]:
    text = values.get(key)
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def check_expiry_after_effective(values: Values, today: date) -> tuple[Finding, ...]:
    """``expiry_date`` strictly before ``effective_date`` (same day is a one-day policy: 零时起 … 二十四时止)."""
    effective, expiry = _iso(values, "effective_date"), _iso(values, "expiry_date")
    if effective is not None and expiry is not None and expiry < effective:
        return (("expiry_date", ISSUE_EXPIRY_BEFORE_EFFECTIVE),)
    return ()


def check_issue_not_after_effective(values: Values, today: date) -> tuple[Finding, ...]:
    """A policy signed after it took effect is suspicious."""
    effective, issued = _iso(values, "effective_date"), _iso(values, "issue_date")
    if effective is not None and issued is not None and issued > effective:
        return (("issue_date", ISSUE_ISSUE_AFTER_EFFECTIVE),)
    return ()


def check_id_birth_dates(values: Values, today: date) -> tuple[Finding, ...]:
    """The birth date in an 18-character ID must be a real date in [1900-01-01, today]."""
    findings: list[Finding] = []
    for key in ID_FIELDS:
        id_number = values.get(key)
        if not id_number or len(id_number) != 18:
            continue
        born = id_birth_date(id_number)
        if born is None or born.year < MIN_YEAR or born > today:
            findings.append((key, ISSUE_ID_BIRTHDATE))
    return tuple(findings)


def check_two_ids_two_people(values: Values, today: date) -> tuple[Finding, ...]:
    """The insured's name is the policyholder's while their ID numbers are two valid numbers: two people (a misread
    digit fails the check character), so one of the names belongs to someone else on the page."""
    ph, ins = values.get("policyholder_id_number"), values.get("insured_id_number")
    name = values.get("insured_name")
    if (name and name == values.get("policyholder_name") and ph and ins and ph != ins
            and not id_number_issues(ph, today) and not id_number_issues(ins, today)):
        return (("insured_name", ISSUE_NAME_OF_ANOTHER_ID),)
    return ()


Check = Callable[[Values, date], tuple[Finding, ...]]

CHECKS: dict[str, Check] = {
    "expiry_after_effective": check_expiry_after_effective,
    "issue_not_after_effective": check_issue_not_after_effective,
    "id_birth_dates": check_id_birth_dates,
    "two_ids_two_people": check_two_ids_two_people,
}


def validate_fields(values: Values, today: date) -> dict[str, tuple[str, ...]]:
    """Run every check in :data:`CHECKS`; returns ``{field key: issues}`` for fields with at least one issue."""
    out: dict[str, tuple[str, ...]] = {}
    for check in CHECKS.values():
        for key, issue in check(values, today):
            if issue not in out.get(key, ()):
                out[key] = out.get(key, ()) + (issue,)
    return out
