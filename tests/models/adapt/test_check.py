"""The leave-one-out check of learned wordings: fields whose wordings, learned from the other corrected documents,
read each held-out one right are vouched for; a wording that reads a value the reviewer did not write is not; one
corrected document checks nothing."""
from __future__ import annotations

import copy
from datetime import date

import pytest

from models.adapt.check import MIN_RIGHT, ambiguous, check_wordings
from models.adapt.labelled import parse_record
from models.adapt.learn import learn
from samples.synth.document import generate_document
from samples.synth.few_shot import FEW_SHOT_FAMILIES
from tests.models.adapt.test_folder import _record

TODAY = date(2026, 6, 1)


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [_record(generate_document(33, "dev", i, family="fs_ledger")[1]) for i in range(4)]


def _check(records: list[dict]) -> dict:
    each = [learn([parse_record(f"d{i}.json", r)], today=TODAY) for i, r in enumerate(records)]
    return check_wordings(each, records, TODAY)


def test_wordings_that_read_held_out_documents_right_vouch_for_their_fields(records) -> None:
    checked = _check(records)
    family = FEW_SHOT_FAMILIES["fs_ledger"]
    new_fields = {k for k, text in family.labels.items() if text in family.new}
    counts = checked["per_field"]
    assert checked["method"] == "leave_one_out" and checked["min_right"] == MIN_RIGHT and checked["ambiguous"] == []
    assert {"policyholder_address", "insured_name"} <= set(checked["fields"])
    for key in checked["fields"]:
        assert counts[key]["right"] >= MIN_RIGHT and counts[key]["wrong"] == 0
        assert key in new_fields  # the shipped lexicon reads the others: no learned wording decides them


def test_a_wording_that_reads_another_value_than_the_reviewers_is_not_vouched_for(records) -> None:
    changed = copy.deepcopy(records)
    changed[0]["fields"]["insured_name"]["value"] = "欧阳某某"  # the reviewer's value is not what the label names
    checked = _check(changed)
    assert checked["per_field"]["insured_name"]["wrong"] >= 1
    assert "insured_name" not in checked["fields"]
    assert "policyholder_address" in checked["fields"]


def test_one_corrected_document_checks_nothing(records) -> None:
    checked = _check(records[:1])
    assert checked["fields"] == [] and checked["per_field"] == {}


def test_a_wording_the_lexicon_shares_between_fields_of_one_kind_is_never_vouched_for(records) -> None:
    assert ambiguous("issue_date", "日期") and ambiguous("insured_name", "姓名")  # 生效日期 and 签发日期; 投保人姓名 …
    assert not ambiguous("insured_name", "承保对象") and not ambiguous("policyholder_address", "寄送地址")
    changed = copy.deepcopy(records)
    for r in changed:  # the same documents, their issue date's label printed as a bare 日期
        for line in r["pages"][0]["lines"]:
            line["text"] = line["text"].replace("开立日期", "日期")
    checked = _check(changed)
    assert checked["per_field"]["issue_date"]["right"] >= MIN_RIGHT and not checked["per_field"]["issue_date"]["wrong"]
    assert checked["ambiguous"] == ["issue_date"] and "issue_date" not in checked["fields"]
    assert "insured_name" in checked["fields"]


def test_a_wording_too_few_documents_taught_keeps_its_field_unvouched(records) -> None:
    # a mixed folder: one insurer's two documents print the insured under a wording of their own; with one of them
    # held out, the other alone does not keep it, so no held-out document was read through it
    other = [_record(generate_document(35, "dev", i, family="fs_columns")[1]) for i in range(2)]
    checked = _check(records + other)
    assert "insured_name" in checked["untested"] and "insured_name" not in checked["fields"]
    counts = checked["per_field"]["insured_name"]
    assert counts["right"] >= MIN_RIGHT and counts["wrong"] == 0  # the other insurer's wording read them right
    assert "policyholder_address" in checked["fields"]


def test_an_insurers_wording_three_documents_taught_is_read_on_each_of_them(records) -> None:
    # a mixed folder: nine fs_ledger documents and three fs_columns ones, whose own wordings (保障对象, 契约号码,
    # 保障起始日) are kept by precision alone. Each of the three is read with the other two's teaching, which the
    # folder's rule, counting the held-out document in, keeps: their fields are checked on their own documents
    ledger = records + [_record(generate_document(33, "dev", i, family="fs_ledger")[1]) for i in range(4, 9)]
    columns = [_record(generate_document(35, "dev", i, family="fs_columns")[1]) for i in range(3)]
    checked = _check(ledger + columns)
    counts = checked["per_field"]
    assert counts["insured_name"] == {"right": 12, "wrong": 0}  # 承保对象 on nine, 保障对象 on three
    assert counts["policy_number"] == {"right": 3, "wrong": 0} and counts["effective_date"] == {"right": 3, "wrong": 0}
    assert {"insured_name", "policy_number", "effective_date"} <= set(checked["fields"])
    assert checked["untested"] == []


def test_a_wording_two_documents_of_a_mixed_folder_taught_is_still_never_read(records) -> None:
    columns = [_record(generate_document(35, "dev", i, family="fs_columns")[1]) for i in range(2)]
    checked = _check(records + columns)
    assert "policy_number" not in checked["per_field"]  # 契约号码, kept by no rule, reads no held-out document


def test_a_form_whose_role_words_are_both_new_learns_each_persons_wording_from_self_insured_documents_too() -> None:
    # fs_pairs prints every label in a new wording; on documents 0 and 2 the policyholder is the insured, so one name
    # and one ID number stand under both role words, and on most the issue date is the start date
    from models.adapt.learn import combined, taught, wordings_json

    records = [_record(generate_document(33, "dev", i, family="fs_pairs")[1]) for i in range(5)]
    fields = [r["fields"] for r in records]
    assert fields[0]["insured_name"]["value"] == fields[0]["policyholder_name"]["value"]
    assert fields[1]["insured_name"]["value"] != fields[1]["policyholder_name"]["value"]
    each = [learn([parse_record(f"d{i}.json", r)], today=TODAY) for i, r in enumerate(records)]
    kept = {k: {w["wording"] for w in ws} for k, ws in wordings_json(combined(each)).items()}
    labels = FEW_SHOT_FAMILIES["fs_pairs"].labels
    for key in ("policyholder_name", "insured_name", "policyholder_id_number", "insured_id_number",
                "effective_date", "issue_date"):
        assert kept[key] == {labels[key]}, key
    assert taught(combined(each))[("insured_name", labels["insured_name"])] == 5  # the self-insured ones too
    checked = check_wordings(each, records, TODAY)
    assert {"policyholder_name", "insured_name", "effective_date", "issue_date"} <= set(checked["fields"])


def test_fields_learned_but_not_vouched_say_what_would_settle_them(records) -> None:
    from models.adapt.check import pending

    two = _check(records[:2])  # each wording read on one held-out document: too few
    assert two["fields"] == [] and set(two["pending"]) >= {"insured_name", "policyholder_address"}
    assert "correct more of its form" in two["pending"]["insured_name"]
    changed = copy.deepcopy(records)
    changed[0]["fields"]["insured_name"]["value"] = "欧阳某某"
    wrong = _check(changed)
    assert wrong["pending"]["insured_name"].startswith("read another value than the reviewer's")
    assert "policyholder_address" not in wrong["pending"]  # vouched for
    entry = {"per_field": {"issue_date": {"right": 4, "wrong": 0}}, "ambiguous": ["issue_date"], "untested": [],
             "fields": []}
    assert pending(entry, {"issue_date": []})["issue_date"].endswith("never vouched for")
