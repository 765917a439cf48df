"""Synthetic policy corpus: determinism, label alignment, value consistency, held-out splits, geometry."""
from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import re
import unicodedata
from decimal import Decimal
from pathlib import Path

import cv2
import numpy as np
import pytest

from samples.synth import generate_document, write_corpus
from samples.synth import cli as synth_cli
from samples.synth import degrade, labels, vocab
from samples.synth.chinese import amount_to_capital, date_to_chinese
from samples.synth.corpus import encode, truth_json
from samples.synth.facts import FIELD_KEYS
from samples.synth.fonts import FACES, check_faces, missing_glyphs
from samples.synth.plan import make_plan
from samples.synth.rand import py_rng
from samples.synth.splits import (
    HELD_OUT_DEGRADATIONS, HELD_OUT_FAMILIES, HELD_OUT_FONTS, SHARED_FAMILIES, SHARED_FONTS, policy_for,
)

LONG_SIDE = 640
SEED = 11
DOCS = [("train", i) for i in range(8)] + [("test", i) for i in range(8)] + [("dev", 0)]


@functools.lru_cache(maxsize=None)
def doc(split: str, index: int, seed: int = SEED) -> tuple[np.ndarray, dict]:
    return generate_document(seed, split, index, LONG_SIDE)


def all_docs() -> list[tuple[np.ndarray, dict]]:
    return [doc(s, i) for s, i in DOCS]


# -- independent parsers of printed values -------------------------------------------------------

_CAP_DIGITS = {c: i for i, c in enumerate("零壹贰叁肆伍陆柒捌玖")}
_CAP_UNITS = {"拾": 10, "佰": 100, "仟": 1000}
_HAN_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")}


def parse_capital_integer(text: str) -> int:
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _CAP_DIGITS:
            digit = _CAP_DIGITS[ch]
        elif ch in _CAP_UNITS:
            section += (digit or 1) * _CAP_UNITS[ch]
            digit = 0
        elif ch == "万":
            total += (section + digit) * 10_000
            section = digit = 0
        elif ch == "亿":
            total = (total + section + digit) * 100_000_000
            section = digit = 0
        else:
            raise ValueError(ch)
    return total + section + digit


def parse_capital(text: str) -> Decimal:
    m = re.fullmatch(r"(?:人民币)?([零壹贰叁肆伍陆柒捌玖拾佰仟万亿]*)[元圆](?:(零)?([壹贰叁肆伍陆柒捌玖])角)?"
                     r"(?:零?([壹贰叁肆伍陆柒捌玖])分)?整?", text)
    assert m, text
    yuan = parse_capital_integer(m.group(1)) if m.group(1) else 0
    jiao = _CAP_DIGITS[m.group(3)] if m.group(3) else 0
    fen = _CAP_DIGITS[m.group(4)] if m.group(4) else 0
    return Decimal(yuan) + Decimal(jiao) / 10 + Decimal(fen) / 100


def parse_amount(text: str) -> str:
    t = text.replace(" ", "")
    values: list[Decimal] = []
    small = re.search(r"[¥￥]([\d,]+\.\d{2})", t)
    if small:
        values.append(Decimal(small.group(1).replace(",", "")))
    capital = re.match(r"(?:人民币)?[零壹贰叁肆伍陆柒捌玖拾佰仟万亿]+[元圆][零壹贰叁肆伍陆柒捌玖角分整]*", t)
    if capital:
        values.append(parse_capital(capital.group(0)))
    if not values:
        m = re.fullmatch(r"(?:RMB)?([\d,]+(?:\.\d{1,2})?)(万)?元?", t)
        assert m, text
        v = Decimal(m.group(1).replace(",", ""))
        values.append(v * 10_000 if m.group(2) else v)
    assert len(set(values)) == 1, (text, values)
    return f"{values[0]:.2f}"


def _han_number(text: str) -> int:
    if "十" not in text:
        return _HAN_DIGITS[text]
    tens, _, ones = text.partition("十")
    return (_HAN_DIGITS[tens] if tens else 1) * 10 + (_HAN_DIGITS[ones] if ones else 0)


_TIME_SUFFIXES = {"", "零时起", "0时起", "零时", "二十四时止", "24时止", "二十四时"}


def parse_date(text: str) -> str:
    m = (re.fullmatch(r"(\d{4})年(\d{1,2})月(\d{1,2})日(.*)", text)
         or re.fullmatch(r"(\d{4})[/\-.](\d{1,2})[/\-.](\d{1,2})(.*)", text))
    if m:
        y, mo, d, rest = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
    else:
        m = re.fullmatch(r"([〇一二三四五六七八九]{4})年([一二三四五六七八九十]+)月([一二三四五六七八九十]+)日(.*)", text)
        assert m, text
        y = int("".join(str(_HAN_DIGITS[c]) for c in m.group(1)))
        mo, d, rest = _han_number(m.group(2)), _han_number(m.group(3)), m.group(4)
    assert rest in _TIME_SUFFIXES, text
    return dt.date(y, mo, d).isoformat()


def id_checksum_ok(value: str) -> bool:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return len(value) == 18 and "10X98765432"[sum(int(c) * w for c, w in zip(value[:17], weights)) % 11] == value[17]


def spans(truth: dict) -> dict[str, list[str]]:
    """Labelled spans per field, in line order (a span may continue across lines)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in truth["lines"]:
        for ch, lab in zip(line["text"], line["labels"]):
            if lab.startswith("B-"):
                current = lab[2:]
                out.setdefault(current, []).append(ch)
            elif lab.startswith("I-"):
                assert current == lab[2:], f"I- without B- for {lab} in {line['text']!r}"
                out[current][-1] += ch
            else:
                current = None
    return out


# -- tests -----------------------------------------------------------------------------------------

def test_fonts_installed() -> None:
    check_faces()


def test_same_seed_same_bytes() -> None:
    a_img, a_truth = generate_document(5, "train", 3, LONG_SIDE)
    b_img, b_truth = generate_document(5, "train", 3, LONG_SIDE)
    assert np.array_equal(a_img, b_img)
    assert truth_json(a_truth) == truth_json(b_truth)
    assert encode(a_img, a_truth["jpeg_quality"]) == encode(b_img, b_truth["jpeg_quality"])


def test_different_seed_or_index_differs() -> None:
    base_img, base_truth = generate_document(5, "train", 3, LONG_SIDE)
    for other in (generate_document(6, "train", 3, LONG_SIDE), generate_document(5, "train", 4, LONG_SIDE)):
        assert other[1]["fields"] != base_truth["fields"]
        assert other[0].shape != base_img.shape or not np.array_equal(other[0], base_img)


def test_corpus_independent_of_workers(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write_corpus(one, 4, 2, "dev", workers=1, long_side=400)
    write_corpus(two, 4, 2, "dev", workers=2, long_side=400)
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in two.iterdir())
    assert len(names) == 8 and names[0] == "dev_00000.jpg"
    for name in names:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


def test_truth_schema() -> None:
    for image, truth in all_docs():
        assert truth["schema"] == "docpipe-synth/1"
        assert set(truth["fields"]) == set(FIELD_KEYS) == set(truth["field_text"])
        assert truth["fields"]["policy_number"] is not None
        assert (truth["height"], truth["width"]) == image.shape[:2] and image.dtype == np.uint8
        assert truth["image"] == f"{truth['split']}_{truth['index']:05d}.jpg"
        assert truth["degradations"][-1] == f"jpeg:{truth['jpeg_quality']}"
        assert 50 <= truth["jpeg_quality"] <= 95
        for key in FIELD_KEYS:
            assert (truth["fields"][key] is None) == (truth["field_text"][key] is None)
        json.dumps(truth)


def test_field_text_is_rendered() -> None:
    for _, truth in all_docs():
        page_text = "".join(line["text"] for line in truth["lines"])
        for key, text in truth["field_text"].items():
            if text is not None:
                assert text in page_text, (truth["image"], key, text)


def test_labels_line_up() -> None:
    allowed = {"O"} | {f"{p}-{k}" for p in "BI" for k in FIELD_KEYS} | {f"K-{k}" for k in (*FIELD_KEYS, "period")}
    for _, truth in all_docs():
        for line in truth["lines"]:
            assert len(line["labels"]) == len(line["text"]) == len(line["char_boxes"]), line["text"]
            assert set(line["labels"]) <= allowed
            assert line["text"] == line["text"].strip() and line["text"]
        found = spans(truth)
        for key, text in truth["field_text"].items():
            if text is None:
                assert key not in found, (truth["image"], key)
            else:
                assert found.get(key), (truth["image"], key)
                assert all(s == text for s in found[key]), (truth["image"], key, text, found[key])
                # fields other than insurer/policy number are labelled exactly once
                if key not in ("insurer", "policy_number"):
                    assert len(found[key]) == 1, (truth["image"], key, found[key])


def test_key_tags_mark_label_words() -> None:
    """The label words of a field carry ``K-<field>`` (colon and blanks excluded), and a field's key run
    has that field's value on the page (``period`` labels the effective/expiry date range)."""
    seen: set[str] = set()
    families: set[str] = set()
    for _, truth in all_docs():
        flat = [(ch, lab) for line in truth["lines"] for ch, lab in zip(line["text"], line["labels"])]
        for i, (ch, lab) in enumerate(flat):
            if not lab.startswith("K-"):
                continue
            key = lab[2:]
            seen.add(key)
            families.add(truth["layout"])
            assert ch not in "：:", (truth["image"], lab)
            answers = ("effective_date", "expiry_date") if key == "period" else (key,)
            assert any(truth["field_text"][k] is not None for k in answers), (truth["image"], key)
            assert any(l2 in (f"B-{k}" for k in answers) for _, l2 in flat), (truth["image"], key)
    assert len(seen) >= 12, seen
    assert len(families) >= 4, families


def test_normalized_values_consistent() -> None:
    for _, truth in all_docs():
        f, t = truth["fields"], truth["field_text"]
        for key in ("policyholder_id_number", "insured_id_number"):
            if f[key] is not None:
                assert id_checksum_ok(f[key]), f[key]
                assert "".join(t[key].split()).upper() == f[key]
                dt.date(int(f[key][6:10]), int(f[key][10:12]), int(f[key][12:14]))
        for key in ("sum_insured", "premium"):
            if f[key] is not None:
                assert parse_amount(t[key]) == f[key], (t[key], f[key])
        for key in ("effective_date", "expiry_date", "issue_date"):
            if f[key] is not None:
                assert parse_date(t[key]) == f[key], (t[key], f[key])
        if f["effective_date"] and f["expiry_date"]:
            assert f["expiry_date"] > f["effective_date"]
        if f["effective_date"] and f["issue_date"]:
            assert f["issue_date"] <= f["effective_date"]
        if f["policyholder_phone"] is not None:
            assert re.fullmatch(r"1[35789]\d{9}", f["policyholder_phone"])
            assert re.sub(r"[ \-]", "", t["policyholder_phone"]) == f["policyholder_phone"]
        assert f["policy_number"] == "".join(t["policy_number"].split()).upper()
        for key in ("insurer", "product_name", "policyholder_address"):
            if f[key] is not None:
                assert f[key] == "".join(unicodedata.normalize("NFKC", t[key]).split())
        for key in ("policyholder_name", "insured_name"):
            assert f[key] == "".join(t[key].split()) and 2 <= len(f[key]) <= 4
        if f["beneficiary_name"] is not None:
            expected = "法定" if t["beneficiary_name"] in ("法定", "法定继承人") else t["beneficiary_name"]
            assert f["beneficiary_name"] == expected


def test_chinese_numerals() -> None:
    assert amount_to_capital(50_000_000) == "伍拾万元整"
    assert amount_to_capital(325_650) == "叁仟贰佰伍拾陆元伍角"
    assert amount_to_capital(100_500_000) == "壹佰万零伍仟元整"
    assert amount_to_capital(325_605) == "叁仟贰佰伍拾陆元零伍分"
    assert date_to_chinese(dt.date(2026, 1, 1)) == "二〇二六年一月一日"
    assert date_to_chinese(dt.date(2030, 12, 31)) == "二〇三〇年十二月三十一日"
    assert id_checksum_ok("11010519491231002X")
    for cents in (100, 1_050, 99_999_999, 1_000_100, 10_001_000_000, 123_456_789):
        assert parse_amount(amount_to_capital(cents)) == f"{cents // 100}.{cents % 100:02d}"


def test_geometry() -> None:
    for image, truth in all_docs():
        h, w = image.shape[:2]
        for line in truth["lines"]:
            poly = np.asarray(line["polygon"], dtype=np.float32)
            assert poly.shape == (4, 2)
            for x0, y0, x1, y1 in line["char_boxes"]:
                assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h, (truth["image"], line["text"])
                centre = ((x0 + x1) / 2, (y0 + y1) / 2)
                assert cv2.pointPolygonTest(poly, centre, True) > -2.0, (truth["image"], line["text"])


def test_text_height() -> None:
    """Body text stays legible: CJK characters at least ~18 px tall at the 1400 px default."""
    _, truth = generate_document(SEED, "train", 1)
    heights = [b[3] - b[1] for line in truth["lines"] for ch, b in zip(line["text"], line["char_boxes"])
               if "\u4e00" <= ch <= "\u9fff"]
    assert np.percentile(heights, 5) >= 18


def test_held_out_by_construction() -> None:
    held_labels = labels.all_held_out_labels()
    assert not held_labels & labels.all_shared_labels()
    assert not set(HELD_OUT_FAMILIES) & set(SHARED_FAMILIES)
    assert not set(HELD_OUT_FONTS) & set(SHARED_FONTS)
    seen = {"family": set(), "font": set(), "label": set(), "degradation": set()}
    for split in ("train", "dev", "test"):
        for i in range(150):
            plan = make_plan(SEED, split, i, 200)
            used_labels = {e.label.replace(" ", "").replace("\u3000", "") for e in plan.entries}
            degs = {d.split(":")[0] for d in degrade.choose(py_rng(SEED, split, i, "degrade"), policy_for(split)).names(False)}
            if split != "test":
                assert plan.family in SHARED_FAMILIES
                assert plan.face.name in SHARED_FONTS
                assert not used_labels & held_labels, used_labels & held_labels
                assert not degs & set(HELD_OUT_DEGRADATIONS)
            else:
                seen["family"].add(plan.family)
                seen["font"].add(plan.face.name)
                seen["label"] |= used_labels & held_labels
                seen["degradation"] |= degs & set(HELD_OUT_DEGRADATIONS)
    assert set(HELD_OUT_FAMILIES) <= seen["family"] and set(HELD_OUT_FONTS) <= seen["font"]
    assert len(seen["label"]) >= 10 and seen["degradation"] == set(HELD_OUT_DEGRADATIONS)
    rendered = [truth for _, truth in all_docs() if truth["split"] == "test"]
    assert any(t["layout"] in HELD_OUT_FAMILIES for t in rendered)
    assert any(t["font"] in HELD_OUT_FONTS for t in rendered)


def test_glyph_coverage() -> None:
    chars: set[str] = set()
    for value in vars(vocab).values():
        if isinstance(value, str):
            chars |= set(value)
        elif isinstance(value, (tuple, list, dict)):
            chars |= set(json.dumps(value, ensure_ascii=False, default=str))
    for table in (labels.SHARED_LABELS, labels.HELD_OUT_LABELS, labels.SECTION_LABELS, labels.SECTION_TITLES):
        chars |= set(json.dumps(table, ensure_ascii=False))
    for _, truth in all_docs():
        chars |= {ch for line in truth["lines"] for ch in line["text"]}
    text = "".join(sorted(c for c in chars if c.isprintable() and c not in '[]{}"\\'))
    for face in FACES.values():
        assert missing_glyphs(face, text) == "", face.name


def test_cli_run(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    synth_cli.add_arguments(parser)
    args = parser.parse_args([str(tmp_path), "--n", "2", "--seed", "4", "--split", "test", "--workers", "1",
                              "--long-side", "500"])
    assert synth_cli.run(args) == 0
    truth = json.loads((tmp_path / "test_00001.json").read_text(encoding="utf-8"))
    image = cv2.imread(str(tmp_path / truth["image"]))
    assert image.shape[:2] == (truth["height"], truth["width"]) == (500, 354)


@pytest.mark.parametrize("family", HELD_OUT_FAMILIES + SHARED_FAMILIES)
def test_every_family_renders(family: str) -> None:
    split = "test" if family in HELD_OUT_FAMILIES else "train"
    index = next(i for i in range(300) if make_plan(SEED, split, i, 200).family == family)
    _, truth = doc(split, index)
    assert truth["layout"] == family
    assert sum(v is not None for v in truth["fields"].values()) >= 12
