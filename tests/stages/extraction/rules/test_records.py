"""Input line records and the raw text kept in a match."""
from __future__ import annotations

from stages.extraction.rules import OcrLine, extract_rules, lines_from_records
from tests.stages.extraction.rules.helpers import TODAY, rows, values


def test_lines_from_records() -> None:
    records = [{"text": "投保人：张三", "polygon": [[10, 10], [200, 10], [200, 40], [10, 40]]},
               {"text": "保险费：¥5,230.50", "polygon": [[10, 60], [200, 60], [200, 90], [10, 90]], "page": 0}]
    lines = lines_from_records(records)
    assert lines[0] == OcrLine("投保人：张三", ((10.0, 10.0), (200.0, 10.0), (200.0, 40.0), (10.0, 40.0)), 0)
    got = values(lines)
    assert got["policyholder_name"] == "张三" and got["premium"] == "5230.50"


def test_raw_text_keeps_original_characters() -> None:
    result = extract_rules(rows(("联系电话：１３８－１２３４－５６７８",)), TODAY)
    m = result["policyholder_phone"]
    assert m is not None and m.text == "１３８－１２３４－５６７８" and m.value == "13812345678"
