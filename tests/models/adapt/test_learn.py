"""Which learned wordings a label folder keeps: the wording of one form, and each insurer's in a folder of several."""
from __future__ import annotations

from collections import Counter

from models.adapt.labelled import Correction, LabelledDocument
from models.adapt.learn import (MIN_PRECISION, MIN_SHARE, MIN_TAUGHT, Learned, combined, held_out_keeps,
                                kept_by_precision, learn, left_out_json, printed_in, taught, without,
                                wordings_json)
from models.adapt.locate import Box

_NAMES = ["王小明", "李华", "张伟", "刘洋", "陈静", "杨帆", "赵磊", "周敏", "吴昊", "孙悦", "郑凯", "冯雪", "韩梅", "曹阳", "彭程",
          "董洁"]


def _doc(i: int, label: str, aside: str = "") -> LabelledDocument:
    """One corrected document: ``label`` left of the insured's name, an optional aside printed under it."""
    name = _NAMES[i]
    boxes = [Box(0, 0, label, 50, 100, 50 + 24 * len(label), 130), Box(0, 1, name, 300, 100, 372, 130)]
    if aside:
        boxes.append(Box(0, 2, aside, 50, 400, 50 + 24 * len(aside), 430))
    return LabelledDocument(f"d{i}.jpg", tuple(boxes), (Correction("insured_name", name, name, None),))


def _kept(docs: list[LabelledDocument]) -> set[str]:
    learned = combined(learn([d]) for d in docs)
    return {w["wording"] for w in wordings_json(learned).get("insured_name", [])}


def test_each_insurers_wording_is_kept_in_a_folder_of_several() -> None:
    # twelve documents of a form with the shipped label, three of an insurer that prints its own wording
    docs = [_doc(i, "被保险人") for i in range(12)] + [_doc(12 + i, "受保对象") for i in range(3)]
    assert 3 < MIN_SHARE * 15  # the share of the folder alone would leave it out
    assert MIN_TAUGHT <= 3
    assert _kept(docs) == {"受保对象"}


def test_a_wording_too_few_documents_taught_in_a_folder_of_several_is_left_out_and_listed() -> None:
    docs = [_doc(i, "被保险人") for i in range(12)] + [_doc(12, "受保对象"), _doc(13, "受保对象"), _doc(14, "保障人员")]
    assert MIN_TAUGHT > 2
    assert _kept(docs) == set()
    left = left_out_json(combined(learn([d]) for d in docs))
    assert left == {"insured_name": [{"wording": "受保对象", "count": 2, "printed": 2},
                                     {"wording": "保障人员", "count": 1, "printed": 1}]}


def test_an_aside_every_document_prints_is_left_out_where_it_introduced_the_value_three_times() -> None:
    # three documents whose labelled form was lost: the aside stood next to the value there, and it is printed on
    # every document of the layout, so it introduces the field in too few of the documents that print it
    docs = [_doc(i, "被保险人", aside="温馨提示") for i in range(12)] + [_doc(12 + i, "温馨提示") for i in range(3)]
    assert 3 < MIN_PRECISION * 15
    assert _kept(docs) == set()


def test_a_folder_of_one_form_keeps_its_wording_from_one_document() -> None:
    assert _kept([_doc(0, "受保对象")]) == {"受保对象"}


def test_a_wording_seen_in_a_small_share_of_the_documents_is_left_out() -> None:
    learned = Learned()
    learned.labelled.update({"premium": 10, "insured_name": 1})
    learned.wordings.update({("premium", "旁注", "same_line_prefix"): 1, ("insured_name", "联络对象", "right_of"): 1})
    assert 1 < MIN_SHARE * 10
    assert wordings_json(learned) == {"insured_name": [{"wording": "联络对象", "relation": "right_of", "count": 1}]}


def test_a_held_out_document_counts_toward_the_precision_test_of_the_wording_it_taught() -> None:
    docs = [_doc(i, "被保险人") for i in range(12)] + [_doc(12 + i, "受保对象") for i in range(3)]
    each = [learn([d]) for d in docs]
    folder = combined(each)
    assert kept_by_precision(folder, "insured_name", "受保对象", 3)
    assert not kept_by_precision(combined(learn([d]) for d in docs[12:]), "insured_name", "受保对象", 3)  # by share
    printed = Counter({"受保对象": printed_in(folder, "受保对象")})
    rest = without(folder, each[12], printed)  # one of the three held out
    assert rest.wordings == combined(e for j, e in enumerate(each) if j != 12).wordings
    assert printed_in(rest, "受保对象") == 2 and rest.labelled["insured_name"] == 14
    assert wordings_json(rest) == {}  # the other two alone are too few for the folder's rule
    assert held_out_keeps(taught(rest)[("insured_name", "受保对象")], printed_in(rest, "受保对象"))
    two = combined(e for j, e in enumerate(each) if j != 13)  # a folder where only two documents teach it
    rest = without(two, each[12], Counter({"受保对象": printed_in(two, "受保对象")}))
    assert not held_out_keeps(taught(rest)[("insured_name", "受保对象")], printed_in(rest, "受保对象"))
    aside = [_doc(i, "被保险人", aside="温馨提示") for i in range(12)] + [_doc(12 + i, "温馨提示") for i in range(3)]
    each = [learn([d]) for d in aside]
    folder = combined(each)
    rest = without(folder, each[12], Counter({"温馨提示": printed_in(folder, "温馨提示")}))
    # printed on fourteen documents, taught on two
    assert not held_out_keeps(taught(rest)[("insured_name", "温馨提示")], printed_in(rest, "温馨提示"))


def _two_people(i: int, same: bool) -> LabelledDocument:
    """A form whose two role words are both new: 契约人 (policyholder) above 保障者 (insured), each left of a name;
    with ``same`` the policyholder is the insured, and one name is printed under both."""
    holder, insured = _NAMES[i], _NAMES[i] if same else _NAMES[i + 1]
    boxes = [Box(0, 0, "契约人", 50, 100, 122, 130), Box(0, 1, holder, 300, 100, 372, 130),
             Box(0, 2, "保障者", 50, 200, 122, 230), Box(0, 3, insured, 300, 200, 372, 230)]
    return LabelledDocument(f"p{i}.jpg", tuple(boxes), (Correction("policyholder_name", holder, holder, None),
                                                       Correction("insured_name", insured, insured, None)))


def _names(learned: Learned) -> dict[str, set[str]]:
    return {k: {w["wording"] for w in ws} for k, ws in wordings_json(learned).items()}


def test_a_name_two_fields_share_takes_the_wordings_the_other_documents_taught() -> None:
    # the value of the same person stands under both new role words: alone, that document says nothing of which is
    # whose; with one document of two people beside it, each field takes its own wording
    alone = learn([_two_people(0, same=True)])
    assert _names(alone) == {} and sum(alone.shared.values()) == 2
    folder = combined([learn([_two_people(0, same=True)]), learn([_two_people(2, same=True)]),
                       learn([_two_people(4, same=False)])])
    assert _names(folder) == {"policyholder_name": {"契约人"}, "insured_name": {"保障者"}}
    assert taught(folder)[("insured_name", "保障者")] == 3 and taught(folder)[("insured_name", "契约人")] == 0
    # held out, the document of two people leaves the other two unresolved: nothing is taught from them
    each = [learn([_two_people(0, same=True)]), learn([_two_people(2, same=True)]), learn([_two_people(4, same=False)])]
    rest = without(combined(each), each[2], Counter())
    assert taught(rest) == Counter()


def test_one_self_insured_document_settles_the_names_by_a_role_word_its_other_labels_share() -> None:
    # the policyholder's phone stands under 契约人电话 on the same page: 契约人 is the policyholder's role word, so the
    # insured's name takes the other wording
    doc = _two_people(0, same=True)
    phone = (Box(0, 4, "契约人电话", 50, 300, 170, 330), Box(0, 5, "13800138000", 300, 300, 520, 330))
    doc = LabelledDocument(doc.name, doc.boxes + phone,
                           doc.corrections + (Correction("policyholder_phone", "13800138000", None, None),))
    assert _names(learn([doc])) == {"policyholder_name": {"契约人"}, "insured_name": {"保障者"},
                                    "policyholder_phone": {"契约人电话"}}
    # a role word none of the page's other labels begins settles nothing
    assert _names(learn([_two_people(0, same=True)])) == {}
