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
