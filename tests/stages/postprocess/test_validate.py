"""Cross-field checks of stages.postprocess.validate."""
from __future__ import annotations

from datetime import date

from stages.postprocess.values import id_check_char
from stages.postprocess.validate import (
    CHECKS,
    ISSUE_EXPIRY_BEFORE_EFFECTIVE,
    ISSUE_ISSUE_AFTER_EFFECTIVE,
    ISSUE_NAME_OF_ANOTHER_ID,
    validate_fields,
)

TODAY = date(2026, 6, 1)


def _id(birth: str) -> str:
    first17 = "110105" + birth + "451"
    return first17 + id_check_char(first17)


GOOD = {
    "policy_number": "P2026000123",
    "policyholder_id_number": _id("19900307"),
    "insured_id_number": _id("20150101"),
    "effective_date": "2026-01-01",
    "expiry_date": "2027-01-01",
    "issue_date": "2025-12-20",
}


def test_consistent_document_has_no_issues() -> None:
    assert validate_fields(GOOD, TODAY) == {}


def test_expiry_before_effective() -> None:
    values = {**GOOD, "expiry_date": "2025-12-31"}
    assert validate_fields(values, TODAY) == {"expiry_date": (ISSUE_EXPIRY_BEFORE_EFFECTIVE,)}


def test_same_day_policy_is_allowed() -> None:
    values = {**GOOD, "expiry_date": "2026-01-01", "issue_date": "2026-01-01"}
    assert validate_fields(values, TODAY) == {}


def test_issue_after_effective() -> None:
    values = {**GOOD, "issue_date": "2026-01-02"}
    assert validate_fields(values, TODAY) == {"issue_date": (ISSUE_ISSUE_AFTER_EFFECTIVE,)}


def test_both_date_issues() -> None:
    values = {**GOOD, "expiry_date": "2025-01-01", "issue_date": "2026-02-01"}
    assert validate_fields(values, TODAY) == {
        "expiry_date": (ISSUE_EXPIRY_BEFORE_EFFECTIVE,),
        "issue_date": (ISSUE_ISSUE_AFTER_EFFECTIVE,),
    }


def test_missing_or_unparseable_dates_skip_checks() -> None:
    for missing in ("effective_date", "expiry_date", "issue_date"):
        values = {k: v for k, v in GOOD.items() if k != missing}
        assert validate_fields(values, TODAY) == {}
    assert validate_fields({**GOOD, "effective_date": None}, TODAY) == {}
    assert validate_fields({**GOOD, "effective_date": "not a date", "expiry_date": "2000-01-01"}, TODAY) == {}


def test_future_birth_date_in_id() -> None:
    values = {**GOOD, "insured_id_number": _id("20260602")}
    assert validate_fields(values, TODAY) == {"insured_id_number": ("id_birthdate",)}
    assert validate_fields(values, date(2026, 6, 2)) == {}


def test_invalid_and_ancient_birth_dates_in_id() -> None:
    values = {**GOOD, "policyholder_id_number": _id("19900230"), "insured_id_number": _id("18991231")}
    assert validate_fields(values, TODAY) == {
        "policyholder_id_number": ("id_birthdate",),
        "insured_id_number": ("id_birthdate",),
    }


def test_malformed_ids_are_left_to_the_normalizer() -> None:
    assert validate_fields({**GOOD, "policyholder_id_number": "12345"}, TODAY) == {}


def test_registry_is_explicit() -> None:
    assert list(CHECKS) == ["expiry_after_effective", "issue_not_after_effective", "id_birth_dates",
                            "two_ids_two_people"]


def test_the_insured_named_as_the_policyholder_with_another_valid_id() -> None:
    names = {"policyholder_name": "黎丹璐", "insured_name": "黎丹璐"}
    assert validate_fields({**GOOD, **names}, TODAY) == {"insured_name": (ISSUE_NAME_OF_ANOTHER_ID,)}
    # one ID number: one person (self-insured); other names: two people
    same = {**GOOD, **names, "insured_id_number": GOOD["policyholder_id_number"]}
    assert validate_fields(same, TODAY) == {}
    assert validate_fields({**GOOD, **names, "insured_name": "贾成亮"}, TODAY) == {}


def test_a_misread_id_number_does_not_make_a_second_person() -> None:
    # a wrong digit fails the check character: the two numbers may be one person's, misread
    bad = GOOD["insured_id_number"][:-2] + str((int(GOOD["insured_id_number"][-2]) + 1) % 10) + GOOD["insured_id_number"][-1]
    names = {"policyholder_name": "黎丹璐", "insured_name": "黎丹璐"}
    assert validate_fields({**GOOD, **names, "insured_id_number": bad}, TODAY) == {}
    assert validate_fields({**GOOD, **names, "insured_id_number": None}, TODAY) == {}
