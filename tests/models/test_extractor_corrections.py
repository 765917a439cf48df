"""Corrected schema-v1 results -> labelled pages: values found in the OCR lines (numpy only)."""
from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from models.extractor.corrections import labelled_pages, load_labelled_folder
from stages.extraction.ernie_features import LABELS
from stages.extraction.field_specs import FIELDS
from tests.models.extractor_fakes import corrected_result

TODAY = date(2026, 11, 30)


def _spans(page) -> dict[str, str]:
    out: dict[str, str] = {}
    for text, labels in zip(page.doc.texts, page.doc.labels):
        for ch, lab in zip(text, labels):
            name = LABELS[int(lab)]
            if name.startswith("B-"):
                out[name[2:]] = ch
            elif name.startswith("I-"):
                out[name[2:]] += ch
    return out


def test_values_are_located_even_when_the_extractor_read_something_else() -> None:
    res = corrected_result(3, wrong=("policyholder_name", "sum_insured"))
    (page,) = labelled_pages(res, "doc3", TODAY)
    spans = _spans(page)
    assert not page.missing and set(page.found) == set(res["fields"])
    for key, f in res["fields"].items():
        assert FIELDS[key].normalizer(spans[key], TODAY).value == f["value"], key
    assert spans["policyholder_name"] == res["fields"]["policyholder_name"]["value"]
    assert "年" in spans["effective_date"]  # labelled as printed; the record holds the ISO date


def test_value_absent_from_the_page_is_reported_not_labelled() -> None:
    res = corrected_result(4)
    res["fields"]["insured_name"]["value"] = "欧阳不在"
    (page,) = labelled_pages(res, "doc4", TODAY)
    assert "insured_name" in page.missing and "insured_name" not in _spans(page)


def test_folder_needs_an_image_beside_each_json(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"d{i}.json").write_text(json.dumps(corrected_result(i), ensure_ascii=False), encoding="utf-8")
    (tmp_path / "d0.jpg").write_bytes(b"\xff\xd8\xff")
    (tmp_path / "d1.png").write_bytes(b"\x89PNG")
    (tmp_path / "d1.json").write_text("{broken", encoding="utf-8")
    pages, errors = load_labelled_folder(tmp_path, TODAY)
    assert len(pages) == 1 and pages[0].doc.name == "d0.json#0"
    assert set(errors) == {"d1.json", "d2.json"} and "no image" in errors["d2.json"]


def _line_of(res: dict, value: str) -> int:
    return next(i for i, ln in enumerate(res["pages"][0]["lines"]) if value in ln["text"])


def _labelled_at(page, key: str) -> list[tuple[int, int]]:
    return [(li, ci) for li, labels in enumerate(page.doc.labels) for ci, lab in enumerate(labels)
            if LABELS[int(lab)] in (f"B-{key}", f"I-{key}")]


def test_source_lines_give_the_clicked_characters_not_the_first_match() -> None:
    res = corrected_result(5)
    lines = res["pages"][0]["lines"]
    name = res["fields"]["policyholder_name"]["value"]
    first = _line_of(res, name)
    # the same name printed again further down (a signature line); the reviewer clicked that one
    lines.insert(0, {"text": "", "score": 0.0, "polygon": [[0, 0], [1, 0], [1, 1], [0, 1]]})  # raw indices != kept
    lines.append({"text": "签名" + name, "score": 0.9, "polygon": [[40, 900], [140, 900], [140, 924], [40, 924]]})
    last = len(lines) - 1
    f = res["fields"]["policyholder_name"]
    (page,) = labelled_pages(res, "doc5", TODAY)
    assert _labelled_at(page, "policyholder_name")[0][0] == first  # searched: the first occurrence (kept index)
    f["source_lines"] = [{"page": 0, "line": last, "start": 2, "end": 2 + len(name), "text": name,
                          "polygon": lines[last]["polygon"]}]
    (page,) = labelled_pages(res, "doc5", TODAY)
    kept_last = len(page.doc.texts) - 1
    assert _labelled_at(page, "policyholder_name") == [(kept_last, 2 + i) for i in range(len(name))]
    assert _spans(page)["policyholder_name"] == name
    assert page.from_source_lines == ("policyholder_name",) and "policyholder_name" in page.found


def test_source_lines_join_several_lines_in_click_order() -> None:
    res = corrected_result(6)
    lines = res["pages"][0]["lines"]
    lines += [{"text": "历下区88号", "polygon": [[40, 900], [160, 900], [160, 924], [40, 924]]},
              {"text": "山东省济南市", "polygon": [[40, 940], [160, 940], [160, 964], [40, 964]]}]
    n = len(lines)
    res["fields"]["insured_name"]["value"] = "山东省济南市历下区88号"  # any value: the span decides
    res["fields"]["insured_name"]["source_lines"] = [{"page": 0, "line": n - 1}, {"page": 0, "line": n - 2}]
    (page,) = labelled_pages(res, "doc6", TODAY)
    tags = [LABELS[int(x)] for x in page.doc.labels[n - 1]] + [LABELS[int(x)] for x in page.doc.labels[n - 2]]
    assert tags == ["B-insured_name"] + ["I-insured_name"] * 11
    assert "insured_name" in page.from_source_lines


def test_stale_source_lines_fall_back_to_searching_the_value() -> None:
    res = corrected_result(7)
    f = res["fields"]["policyholder_name"]
    for bad in ([{"page": 0, "line": 999}], [{"page": 0, "line": 0, "start": 0, "end": 1, "text": "不是这个"}],
                [{"page": 3, "line": 0}], [{"line": 0}], "line 0"):
        f["source_lines"] = bad
        (page,) = labelled_pages(res, "doc7", TODAY)
        assert _spans(page)["policyholder_name"] == f["value"], bad
        assert "policyholder_name" in page.found and not page.from_source_lines
