"""Training documents: OCR caches of several generator runs keep their documents apart by folder; novel wordings
replace the chosen fields' labels in place by strings no lexicon label occurs in, one per label text; everything
else on the page stays as it was; stem-preserving wordings replace only a label's role word or head, one string
per role word on the document; a missing or empty folder is an error."""
from __future__ import annotations

import pickle
import random
from pathlib import Path

import numpy as np
import pytest

from models.scorer.data import Document, load_documents, novel_pool, novel_wordings, stem_split
from stages.contracts.types import Page, TextLine
from stages.extraction.rules.lexicon import FULL_LEXICON


def _line(text: str, y: float) -> TextLine:
    poly = np.array([[0, y], [20 * len(text), y], [20 * len(text), y + 20], [0, y + 20]], np.float32)
    return TextLine(text, 0.9, poly, (0.9,) * len(text))


def test_labels_of_the_chosen_fields_get_novel_wordings_in_place() -> None:
    lines = [_line("投保人：张三", 0), _line("保险金额：50万元", 30), _line("保险费：1200元", 60),
             _line("被保险人：李四", 90), _line("保险金额", 120)]
    doc = Document("d", [lines], [(800.0, 1000.0)], {"sum_insured": "500000.00"})
    pool = novel_pool([doc])
    out = novel_wordings(doc, random.Random(0), ["sum_insured"], pool)
    new = [ln.text for ln in out.lines[0]]
    assert new[0] == "投保人：张三" and new[2] == "保险费：1200元" and new[3] == "被保险人：李四"
    assert new[1].endswith("：50万元") and len(new[1]) == len(lines[1].text)
    assert new[4] == new[1][:4]  # one novel string per label text
    assert FULL_LEXICON.pattern.search(new[1][:4]) is None
    assert all(ch in pool for ch in new[1][:4]) and not set(new[1][:4]) & set("投保被受益人")
    assert out.lines[0][1].char_probs == lines[1].char_probs


def test_stem_split_keeps_the_attribute_and_leaves_labels_without_one_whole() -> None:
    assert stem_split("被保险人证件号码") == ("被保险人", "证件号码", True)
    assert stem_split("身故受益人的姓名") == ("身故受益人", "的姓名", True)
    assert stem_split("被保险人") == ("被保险人", "", True)
    assert stem_split("合同生效日期") == ("合同生效", "日期", False)
    assert stem_split("投保人/被保险人") is None  # two roles: new whole
    assert stem_split("保险费") is None


def test_stem_wordings_share_one_new_role_word_across_a_roles_labels() -> None:
    lines = [_line("被保险人：李四", 0), _line("被保险人证件号码：110101199001011234", 30),
             _line("投保人：张三", 60), _line("生效日期：2024年1月1日", 90), _line("保险费：1200元", 120)]
    doc = Document("d", [lines], [(800.0, 1000.0)], {})
    pool = novel_pool([doc]) + "甲乙丙丁戊己庚辛壬癸"
    keys = ["insured_name", "insured_id_number", "effective_date", "premium"]
    new = [ln.text for ln in novel_wordings(doc, random.Random(3), keys, pool, stem=True).lines[0]]
    role = new[0][:4]
    assert FULL_LEXICON.pattern.search(role) is None and not set(role) & set("投保被受益人")
    assert new[1] == role + "证件号码：110101199001011234"  # the attribute stays, the role word is the same new one
    assert new[2] == "投保人：张三"  # a field not chosen keeps its label
    assert new[3].endswith("日期：2024年1月1日") and new[3][:2] != "生效"
    assert new[4].endswith("：1200元") and new[4][:3] != "保险费"  # no split: new whole
    assert [len(a) for a in new] == [len(ln.text) for ln in lines]


def _cache(folder: Path, name: str, text: str) -> None:
    folder.mkdir()
    page = Page(0, None)  # as the cache writes it: the page without pixels, its shape beside it
    record = {"name": name, "lines": [[_line(text, 0)]], "pages": [(page, (1000, 800, 3))],
              "truth": {"fields": {"policyholder_name": text}}}
    (folder / (Path(name).stem + ".pkl")).write_bytes(pickle.dumps(record))


def test_ocr_caches_of_two_runs_keep_same_named_documents_apart(tmp_path) -> None:
    _cache(tmp_path / "run_a", "train_00000.jpg", "张三")
    _cache(tmp_path / "run_b", "train_00000.jpg", "李四")
    docs = load_documents((), [tmp_path / "run_a", tmp_path / "run_b"])
    assert [d.name for d in docs] == ["run_a/train_00000.jpg", "run_b/train_00000.jpg"]
    assert [d.truth["policyholder_name"] for d in docs] == ["张三", "李四"]
    assert docs[0].page_sizes == [(800.0, 1000.0)]


def test_a_missing_or_empty_folder_is_an_error_not_a_smaller_model(tmp_path) -> None:
    _cache(tmp_path / "run_a", "train_00000.jpg", "张三")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="run_b"):
        load_documents((), [tmp_path / "run_a", tmp_path / "run_b"])
    with pytest.raises(ValueError, match="empty"):
        load_documents([tmp_path / "empty"], [tmp_path / "run_a"])
