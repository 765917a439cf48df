"""Source spans of reviewed values: checked against the machine result, narrowed to the saved value."""
import pytest

from pipeline.service.review_spans import SpanError, checked_spans, narrow_to_value, source_spans

POLY = [[10, 10], [90, 10], [90, 30], [10, 30]]


def result():
    lines = [{"text": t, "polygon": [[x + 100 * i for x in xy] for xy in POLY]}
             for i, t in enumerate(["投保人", "何博瑞", "通讯地址", "山东省济南市", "历下区88号"])]
    return {"pages": [{"index": 0, "width": 600, "height": 200, "lines": lines}]}


def test_whole_lines_in_click_order_with_text_and_polygon_from_the_result():
    spans = checked_spans(result(), [{"page": 0, "line": 4}, {"page": 0, "line": 3, "start": 0, "end": None}])
    assert [(s["line"], s["start"], s["end"], s["text"]) for s in spans] == [(4, 0, 6, "历下区88号"), (3, 0, 6, "山东省济南市")]
    assert spans[0]["polygon"] == result()["pages"][0]["lines"][4]["polygon"]


@pytest.mark.parametrize("clicks, why", [
    ([{"page": 1, "line": 0}], "page 1"),
    ([{"page": 0, "line": 5}], "line 5"),
    ([{"page": 0, "line": 1, "start": 2, "end": 9}], "characters 2..9"),
    ([{"page": 0, "line": 1, "start": 2, "end": 2}], "characters 2..2"),
    ([], "no lines"),
])
def test_clicks_outside_the_result_are_refused(clicks, why):
    with pytest.raises(SpanError, match=why):
        checked_spans(result(), clicks)


def test_clicks_on_two_pages_are_refused():
    res = result()
    res["pages"].append(res["pages"][0])
    with pytest.raises(SpanError, match="different pages"):
        checked_spans(res, [{"page": 0, "line": 1}, {"page": 1, "line": 1}])


def test_value_trimmed_by_the_reviewer_narrows_the_span():
    spans = checked_spans(result(), [{"page": 0, "line": 0}, {"page": 0, "line": 1}])
    assert narrow_to_value(spans, "投保人何博瑞") == spans
    (only,) = narrow_to_value(spans, " 何博瑞 ")
    assert (only["line"], only["start"], only["end"], only["text"]) == (1, 0, 3, "何博瑞")
    across = narrow_to_value(checked_spans(result(), [{"page": 0, "line": 3}, {"page": 0, "line": 4}]), "济南市历下区")
    assert [(s["line"], s["start"], s["end"], s["text"]) for s in across] == [(3, 3, 6, "济南市"), (4, 0, 3, "历下区")]


def test_typed_or_cleared_value_keeps_no_span():
    spans = checked_spans(result(), [{"page": 0, "line": 1}])
    assert narrow_to_value(spans, "何博睿") is None
    assert narrow_to_value(spans, None) is None and narrow_to_value(spans, "  ") is None


def test_source_spans_per_field_and_errors_name_the_field_not_the_value():
    out = source_spans(result(), {"policyholder_name": "何博瑞", "insured_name": "张三"},
                       {"policyholder_name": [{"page": 0, "line": 0}, {"page": 0, "line": 1}],
                        "insured_name": [{"page": 0, "line": 1}]})
    assert list(out) == ["policyholder_name"] and out["policyholder_name"][0]["line"] == 1
    with pytest.raises(SpanError, match="^insured_name: line 9") as err:
        source_spans(result(), {"insured_name": "张三"}, {"insured_name": [{"page": 0, "line": 9}]})
    assert "张三" not in str(err.value)
