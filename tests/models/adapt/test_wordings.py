"""The label that introduces a located value, by relation; known labels and values are not learned."""
from __future__ import annotations

from models.adapt.locate import Box, Located
from models.adapt.wordings import findings, learn_from
from stages.extraction.rules.lexicon import FULL_LEXICON


def _box(i: int, text: str, x: float, y: float) -> Box:
    return Box(0, i, text, x, y, x + 24 * len(text), y + 30)


def test_same_line_prefix_and_right_of() -> None:
    boxes = [_box(0, "收件处所：上海市黄浦区南京东路1号", 50, 100), _box(1, "联络对象", 50, 150), _box(2, "王小明", 300, 150)]
    assert findings("policyholder_address", Located(0, 5, 17), boxes) == [("收件处所", "same_line_prefix")]
    assert findings("insured_name", Located(2, 0, 3), boxes)[0] == ("联络对象", "right_of")


def test_below_table_header_and_row_label() -> None:
    below = [_box(0, "收件处所", 50, 100), _box(1, "上海市黄浦区南京东路1号", 50, 140)]
    assert findings("policyholder_address", Located(1, 0, 12), below) == [("收件处所", "below")]
    table = [_box(0, "姓名", 300, 100), _box(1, "证件号码", 500, 100),
             _box(2, "联络对象", 50, 140), _box(3, "王小明", 300, 140), _box(4, "110105199003074512", 500, 140)]
    values = {"王小明", "110105199003074512"}
    found = learn_from("insured_name", Located(3, 0, 3), table, FULL_LEXICON, values)
    assert found is not None and (found.text, found.relation, found.known) == ("联络对象", "right_of", False)
    # 证件号码 over the column is a known attribute word, the box to the left a value: the row's role cell
    found = learn_from("insured_id_number", Located(4, 0, 18), table, FULL_LEXICON, values)
    assert found is not None and (found.text, found.relation) == ("联络对象", "row_label")
    assert ("证件号码", "table_header") in findings("insured_id_number", Located(4, 0, 18), table)


def test_known_labels_values_and_words_inside_sentences_are_not_learned() -> None:
    known = [_box(0, "被保险人：王小明", 50, 100)]
    found = learn_from("insured_name", Located(0, 5, 8), known, FULL_LEXICON, {"王小明"})
    assert found is not None and found.known
    value_above = [_box(0, "王小明", 50, 100), _box(1, "上海市黄浦区南京东路1号", 50, 140)]
    assert learn_from("policyholder_address", Located(1, 0, 12), value_above, FULL_LEXICON,
                      {"王小明", "上海市黄浦区南京东路1号"}) is None
    sentence = [_box(0, "兹证明，本合同于2026年1月1日成立", 50, 100)]
    assert findings("issue_date", Located(0, 8, 17), sentence) == []


def test_an_aside_in_brackets_is_no_label() -> None:
    boxes = [_box(0, "保险费：陆仟元整(小写:¥6,000.00)", 50, 100)]
    assert findings("premium", Located(0, 12, 21), boxes) == []
