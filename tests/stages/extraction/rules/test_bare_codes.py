"""A policy number whose label was lost, from a box that is nothing but a code of letters and digits."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import PH_ID, rows, values


def test_a_bare_code_after_a_lost_label_is_the_policy_number() -> None:
    assert values(rows(("码KDGV201943723137409",), ("投保人：张三",)))["policy_number"] == "KDGV201943723137409"
    assert values(rows(("-CEHUJ2025119106534402",), ("投保人：张三",)))["policy_number"] == "CEHUJ2025119106534402"


def test_numbers_that_are_no_code_and_labelled_numbers_are_left_alone() -> None:
    # digits only (an ID, a phone, an account), an amount, a hotline: no policy number
    for text in (PH_ID, "13812345678", "6222021234567890123", "RMB61,979.00", "400-734-5705", "ABC-12"):
        assert values(rows((text,), ("投保人：张三",)))["policy_number"] is None, text
    # a label found: its value wins over any bare code
    got = values(rows(("保单号：P2026000123456",), ("KDGV201943723137409",)))
    assert got["policy_number"] == "P2026000123456"
    # a code inside a sentence is no bare code
    assert values(rows(("本保单对应批单号码为EA20261234567890",),))["policy_number"] is None
