"""One ID number, one person: the policyholder's and the insured's names read as one name."""
from datetime import date

import pytest

from stages.contracts.registry import resolve_model
from stages.extraction.decisions import Decision, Proposal
from stages.extraction.field_specs import FIELDS
from stages.extraction.same_person import same_person
from stages.recognition.ctc import CharDict
from tests.stages.extraction.test_assemble import _line, _valid_id

TODAY = date(2026, 11, 30)


@pytest.fixture(scope="module")
def chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


def _decision(key: str, text: str, line: int) -> Decision:
    cand = Proposal(key, text, tuple((0, line, i) for i in range(len(text))), 0.9, "rules", "label")
    return Decision(cand, FIELDS[key].normalizer(text, TODAY))


def _decisions(ph_name, in_name, ph_id=None, in_id=None):
    ph_id, in_id = ph_id or _valid_id(), in_id or _valid_id()
    out = {"policyholder_id_number": _decision("policyholder_id_number", ph_id, 2),
           "insured_id_number": _decision("insured_id_number", in_id, 3)}
    out["policyholder_name"] = _decision("policyholder_name", ph_name, 0) if ph_name else None
    out["insured_name"] = _decision("insured_name", in_name, 1) if in_name else None
    return out


def _lines(chars, ph, in_):
    ids = _line(chars, _valid_id(), {})
    return [[_line(chars, ph[0], ph[1]), _line(chars, in_[0], in_[1]), ids, ids]]


def test_the_reading_both_lines_make_likelier_wins(chars):
    # the policyholder's line hesitated between 朱 and 宋; the insured's line read 宋 surely
    lines = _lines(chars, ("朱涛", {0: ("宋", 0.4)}), ("宋涛", {0: ("朱", 0.01)}))
    out = same_person(_decisions("朱涛", "宋涛"), lines, chars, TODAY)
    assert out["policyholder_name"].normalized.value == "宋涛"
    assert out["policyholder_name"].redecoded_from == "朱涛"
    assert out["insured_name"].normalized.value == "宋涛"
    # the other way round
    lines = _lines(chars, ("宋涛", {0: ("朱", 0.01)}), ("朱涛", {0: ("宋", 0.4)}))
    out = same_person(_decisions("宋涛", "朱涛"), lines, chars, TODAY)
    assert out["insured_name"].normalized.value == "宋涛"


def test_a_missing_name_is_filled_from_the_same_person():
    out = same_person(_decisions("宋涛", None), [[]], None, TODAY)  # no frames needed
    assert out["insured_name"].normalized.value == "宋涛"
    assert out["insured_name"].proposal.how == "same_as_policyholder"


def test_different_ids_or_names_of_different_length_stay(chars):
    other = "11010519880307451"
    from stages.postprocess.values import id_check_char
    other += id_check_char(other)
    lines = _lines(chars, ("朱涛", {0: ("宋", 0.4)}), ("宋涛", {0: ("朱", 0.01)}))
    out = same_person(_decisions("朱涛", "宋涛", in_id=other), lines, chars, TODAY)
    assert out["policyholder_name"].normalized.value == "朱涛"
    assert same_person(_decisions("宋涛", None, in_id=other), lines, chars, TODAY)["insured_name"] is None
    lines = _lines(chars, ("晶璐", {}), ("叶晶璐", {}))
    out = same_person(_decisions("晶璐", "叶晶璐"), lines, chars, TODAY)
    assert (out["policyholder_name"].normalized.value, out["insured_name"].normalized.value) == ("晶璐", "叶晶璐")
