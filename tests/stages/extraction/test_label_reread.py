"""Label re-reading: a lexicon label with one character misread is read as the label only when the recognizer's
frames allow it, never over a label already read, and the rules then take the value it introduces."""
from datetime import date

import pytest

from stages.contracts.registry import resolve_model
from stages.extraction.label_reread import LabelIndex, label_index, label_repairs, reread_labels
from stages.extraction.rules import extract_rules
from stages.extraction.rules.lexicon import FULL_LEXICON, build_lexicon
from stages.recognition.ctc import CharDict
from tests.stages.extraction.test_assemble import _line


@pytest.fixture(scope="module")
def chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


@pytest.fixture(scope="module")
def index() -> LabelIndex:
    return LabelIndex(FULL_LEXICON)


def test_a_label_with_one_misread_character_is_read_as_the_label(chars, index):
    line = _line(chars, "保险期滨日：二〇二八年十一月十二日", {3: ("满", 0.05)})
    assert reread_labels(line, index, chars) == "保险期满日：二〇二八年十一月十二日"


def test_the_frames_must_allow_the_label(chars, index):
    line = _line(chars, "保险期滨日：二〇二八年十一月十二日", {3: ("满", 1e-6)})
    assert reread_labels(line, index, chars) == line.text


def test_characters_of_a_label_already_read_never_change(chars, index):
    # 被保人证件号码 is a label; the frames would also allow 投 at its first character
    line = _line(chars, "被保人证件号码：110101199003074514", {0: ("投", 0.4)})
    assert label_repairs(line, index, chars) == {}


def test_names_digits_and_short_words_are_left_alone(chars, index):
    for text, conf in (("投保人江磊建", {3: ("姓", 0.3)}), ("保费：1234.00", {3: ("5", 0.3)}),
                       ("姓各：张三", {1: ("名", 0.3)})):  # 姓名 has two characters: too short to complete
        line = _line(chars, text, conf)
        assert reread_labels(line, index, chars) == text, text


def test_a_withheld_label_is_not_restored(chars):
    line = _line(chars, "保险期滨日：二〇二八年十一月十二日", {3: ("满", 0.05)})
    assert reread_labels(line, LabelIndex(build_lexicon(["保险期满日"])), chars) == line.text


def test_the_rules_take_the_value_of_the_repaired_label(chars, index):
    line = _line(chars, "保险期滨日：2028年11月12日", {3: ("满", 0.05)})
    today = date(2026, 12, 1)
    before = extract_rules([line], today)["expiry_date"]
    fixed = type(line)(**{**line.__dict__, "text": reread_labels(line, index, chars)})
    after = extract_rules([fixed], today)["expiry_date"]
    assert before is None and after is not None and after.normalized.value == "2028-11-12"


def test_a_stray_character_inside_a_label_becomes_a_blank_when_the_frames_allow(chars, index):
    text = "生效日1期：2025年03月24日"
    line = _line(chars, text, {3: ("", 0.05)})
    assert reread_labels(line, index, chars) == "生效日 期：2025年03月24日"
    today = date(2026, 12, 1)
    before = extract_rules([line], today)["effective_date"]
    assert before is None or before.method == "pattern"  # no label read: only the date-word fallback
    fixed = type(line)(**{**line.__dict__, "text": reread_labels(line, index, chars)})
    got = extract_rules([fixed], today)["effective_date"]
    assert got is not None and got.normalized.value == "2025-03-24" and got.method == "label"
    sure = _line(chars, text, {3: ("", 1e-7)})  # the frames insist on the 1
    assert reread_labels(sure, index, chars) == text


def test_one_index_per_lexicon_object():
    """The full lexicon's index is built once and kept; another lexicon's is kept while it is the last one asked."""
    other = build_lexicon(["保险期满日"])
    assert label_index(FULL_LEXICON) is label_index(FULL_LEXICON)
    first = label_index(other)
    assert label_index(other) is first and first.lexicon is other
    assert label_index(FULL_LEXICON).lexicon is FULL_LEXICON
    assert label_index(build_lexicon(["保险期满日"])) is not first  # an equal lexicon, another object
