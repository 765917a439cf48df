"""Runtime extractor: BIO decoding, featurization and windowing without weights; the exported model
when ``models/weights/extractor`` holds one."""
from __future__ import annotations

import subprocess
import sys

from pathlib import Path

import numpy as np
import pytest

from stages.extraction.ernie_features import (
    FIELDS, LABEL_TO_ID, LABELS, SPECIAL_TOKENS, FeatureSpec, Vocab, build_windows, char_boxes_from_polygon,
    decode_bio, merge_windows, normalize_boxes, page_tokens, plan_windows,
)

CHAR = FeatureSpec.legacy()
from stages.extraction.ernie import (
    ExtractorLine,
    ExtractorPage,
    decode_char_probs,
    spans_from_tags,
)

WEIGHTS = Path(__file__).resolve().parents[3] / "models" / "weights" / "extractor"


def tags(*labels: str) -> list[int]:
    return [LABEL_TO_ID[x] for x in labels]


# ------------------------------------------------------------------------------------------------ BIO


def test_label_set() -> None:
    assert len(FIELDS) == 15 and len(LABELS) == 1 + 2 * 15 + 16 and LABELS[0] == "O"
    assert LABELS[1:3] == ("B-policy_number", "I-policy_number")
    assert LABELS[31] == "K-policy_number" and LABELS[-1] == "K-period"


def test_key_tags_close_value_spans_and_are_no_values() -> None:
    t = tags("K-premium", "K-premium", "O", "B-premium", "I-premium", "K-insured_name", "I-premium")
    got = [(s.field, s.start, s.end) for s in decode_bio(t)]
    assert got == [("premium", 3, 5), ("premium", 6, 7)]


def test_decode_bio_basic_runs() -> None:
    t = tags("O", "B-premium", "I-premium", "O", "B-insured_name", "I-insured_name", "I-insured_name")
    spans = decode_bio(t)
    assert [(s.field, s.start, s.end) for s in spans] == [("premium", 1, 3), ("insured_name", 4, 7)]
    assert all(s.prob == 1.0 for s in spans)


def test_decode_bio_lenient_and_boundaries() -> None:
    t = tags("I-premium", "I-premium", "B-premium", "I-insured_name", "B-premium", "B-premium", "O", "I-issue_date")
    got = [(s.field, s.start, s.end) for s in decode_bio(t)]
    assert got == [
        ("premium", 0, 2),  # I- without B- opens a span
        ("premium", 2, 3),  # B- always opens a new one
        ("insured_name", 3, 4),  # I- of another field closes and opens
        ("premium", 4, 5),
        ("premium", 5, 6),
        ("issue_date", 7, 8),  # ends with the sequence
    ]


def test_decode_bio_mean_probability() -> None:
    t = tags("B-sum_insured", "I-sum_insured", "O")
    (span,) = decode_bio(t, [0.9, 0.5, 0.99])
    assert span.prob == pytest.approx(0.7)
    assert decode_bio([]) == []
    with pytest.raises(ValueError):
        decode_bio(t, [0.1])


def test_spans_from_tags_maps_lines_and_continues_across_lines() -> None:
    texts = ["地址：北京市", "", "海淀区1号", "电话"]
    per_line = [
        tags("O", "O", "O", "B-policyholder_address", "I-policyholder_address", "I-policyholder_address"),
        [],
        tags(*(["I-policyholder_address"] * 5)),
        tags("O", "O"),
    ]
    probs = [np.full(len(t), 0.8) for t in texts]
    (span,) = spans_from_tags(texts, per_line, probs)
    assert span.field == "policyholder_address"
    assert span.text == "北京市海淀区1号"
    assert span.chars == ((0, 3), (0, 4), (0, 5), (2, 0), (2, 1), (2, 2), (2, 3), (2, 4))
    assert span.prob == pytest.approx(0.8)
    with pytest.raises(ValueError):
        spans_from_tags(texts, per_line[:2])


def test_decode_char_probs_uses_argmax() -> None:
    p = np.full((3, len(LABELS)), 0.01, dtype=np.float32)
    p[0, LABEL_TO_ID["B-policy_number"]] = 0.9
    p[1, LABEL_TO_ID["I-policy_number"]] = 0.7
    p[2, 0] = 0.95
    (span,) = decode_char_probs(["P12"], [p])
    assert (span.field, span.text, span.chars) == ("policy_number", "P1", ((0, 0), (0, 1)))
    assert span.prob == pytest.approx(0.8)


# ----------------------------------------------------------------------------------------- featurizing


def small_vocab() -> Vocab:
    return Vocab([*SPECIAL_TOKENS, *"保险单号：P0123456789投人张三", " "])


def test_vocab_lookup_and_roundtrip(tmp_path: Path) -> None:
    v = small_vocab()
    assert v.encode("P0") == [v.tokens.index("P"), v.tokens.index("0")]
    assert v.char_id("Ｐ") == v.char_id("P")  # NFKC fallback (full-width)
    assert v.char_id("\u3000") == v.char_id(" ")  # any whitespace is the space token
    assert v.char_id("龘") == v.unk_id
    v.save(tmp_path / "vocab.txt")
    assert Vocab.load(tmp_path / "vocab.txt").tokens == v.tokens
    with pytest.raises(ValueError):
        Vocab(["a", "b"])


def test_ocr_dictionary_vocab() -> None:
    pytest.importorskip("rapidocr_paddle")
    v = Vocab.from_ocr_dictionary()
    assert len(v) == 4 + 6623 + 1
    assert v.tokens[-1] == " " and v.char_id("保") != v.unk_id


def test_normalize_boxes_scales_and_clips() -> None:
    b = normalize_boxes(np.array([[10, 20, 30, 40], [-5, 0, 2000, 1500], [50, 50, 40, 40]]), 1000, 500)
    assert b.tolist() == [[10, 40, 30, 80], [0, 0, 1000, 1000], [50, 100, 50, 100]]


def _page(texts: list[str]) -> tuple[list[str], list[np.ndarray]]:
    boxes = []
    for li, t in enumerate(texts):
        x = np.arange(len(t)) * 20.0
        boxes.append(np.stack([x, np.full(len(t), li * 30.0), x + 18, np.full(len(t), li * 30.0 + 24)], -1))
    return texts, boxes


def test_page_tokens_with_and_without_separators() -> None:
    v = small_vocab()
    texts, boxes = _page(["保险单号", "", "P01"])
    toks = page_tokens(texts, boxes, 1000, 1000, v, CHAR)
    assert len(toks) == 7 and toks.is_char.all()
    assert toks.char_pos.tolist() == [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0], [2, 1], [2, 2]]
    sep = page_tokens(texts, boxes, 1000, 1000, v, FeatureSpec.legacy(line_sep=True))
    assert len(sep) == 8 and sep.ids[4] == v.sep_id and not sep.is_char[4]
    assert sep.boxes[4].tolist() == sep.boxes[3].tolist()
    with pytest.raises(ValueError):
        page_tokens(["ab"], [np.zeros((1, 4))], 100, 100, v, CHAR)


@pytest.mark.parametrize("n", [0, 1, 10, 510, 511, 700, 900, 1021, 5000])
def test_plan_windows_cover_everything_with_overlap(n: int) -> None:
    spans = plan_windows(n, 512, 384)
    covered = np.zeros(n, dtype=int)
    for s, length in spans:
        assert 0 <= s and s + length <= max(n, 0) and length <= 510
        covered[s : s + length] += 1
    assert (covered >= 1).all()
    for (a, la), (b, _) in zip(spans, spans[1:]):
        assert 0 < b - a <= 384  # starts at most `stride` apart, so overlaps are >= 126 tokens
    if n > 510:
        assert len(spans) == -(-(n - 510) // 384) + 1
    assert plan_windows(900, 512, 448) == [(0, 510), (390, 510)]  # the default stride: 2 windows up to 958


def test_build_windows_frames_and_pads() -> None:
    v = small_vocab()
    texts, boxes = _page(["保险单号：P0123456789"])
    toks = page_tokens(texts, boxes, 1000, 1000, v, CHAR)
    win = build_windows(toks, v, max_len=8, stride=4)
    assert win.input_ids.shape == (len(win.spans), 8)
    for i, (s, length) in enumerate(win.spans):
        assert win.input_ids[i, 0] == v.cls_id and win.input_ids[i, length + 1] == v.sep_id
        assert win.input_ids[i, 1 : 1 + length].tolist() == toks.ids[s : s + length].tolist()
        assert win.bbox[i, length + 1].tolist() == [1000] * 4
        assert win.attention_mask[i].sum() == length + 2
    short = build_windows(page_tokens(["张三"], [np.zeros((2, 4))], 10, 10, v, CHAR), v, 8, 4)
    assert short.input_ids[0].tolist()[:4] == [v.cls_id, v.char_id("张"), v.char_id("三"), v.sep_id]
    assert short.input_ids[0, 4:].tolist() == [v.pad_id] * 4


def test_merge_windows_takes_most_central_window() -> None:
    n, max_len, stride = 20, 10, 4  # windows of 8 tokens
    spans = plan_windows(n, max_len, stride)
    out = np.zeros((len(spans), max_len, 2), dtype=np.float32)
    for i, (s, length) in enumerate(spans):
        out[i, 1 : 1 + length, 0] = i  # which window wrote it
        out[i, 1 : 1 + length, 1] = np.arange(s, s + length)  # page index it refers to
    merged = merge_windows(out, spans, n)
    assert merged[:, 1].tolist() == list(range(n))  # every token from a window that covers it
    src = merged[:, 0].astype(int)
    for t in range(n):
        s, length = spans[src[t]]
        off = t - s
        margin = min(off, length - 1 - off)
        for s2, l2 in spans:
            if s2 <= t < s2 + l2 and not (s2 == 0 or s2 + l2 == n):
                assert margin >= min(t - s2, s2 + l2 - 1 - t) or s == 0 or s + length == n
    assert src[0] == 0 and src[-1] == len(spans) - 1  # page edges come from the edge windows


def test_char_boxes_from_polygon() -> None:
    poly = np.array([[100, 50], [300, 50], [300, 80], [100, 80]])
    even = char_boxes_from_polygon(poly, 4)
    assert even[:, 0].tolist() == [100, 150, 200, 250] and even[-1, 2] == 300
    assert (even[:, 1] == 50).all() and (even[:, 3] == 80).all()
    tall = char_boxes_from_polygon(np.array([[0, 0], [30, 0], [30, 200], [0, 200]]), 4)
    assert tall[:, 1].tolist() == [0, 50, 100, 150] and (tall[:, 2] == 30).all()
    assert char_boxes_from_polygon(poly, 0).shape == (0, 4)


def test_extractor_line_from_text_line() -> None:
    from stages.contracts.types import TextLine

    poly = np.array([[0, 0], [40, 0], [40, 20], [0, 20]], np.float32)
    tl = TextLine("张三", 0.9, poly, char_u=(0.25, 0.75))
    line = ExtractorLine.from_text_line(tl)
    assert line.char_boxes.shape == (2, 4)
    assert line.char_boxes[0].tolist() == pytest.approx([0, 0, 20, 20])
    assert line.char_boxes[1].tolist() == pytest.approx([20, 0, 40, 20])
    bare = ExtractorLine.from_text_line(TextLine("张三李", 0.9, poly))  # no character positions
    assert bare.char_boxes[:, 0].tolist() == pytest.approx([0, 40 / 3, 80 / 3])


def test_runtime_module_does_not_import_paddlenlp() -> None:
    code = "import sys, stages.extraction.ernie; sys.exit(int('paddlenlp' in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[3]).returncode == 0


# -------------------------------------------------------------------------------------- exported model


def _demo_page(n_lines: int = 30) -> ExtractorPage:
    lines = []
    for i in range(n_lines):
        text = ("保险单号：P2026" if i % 3 == 0 else "投保人：张三") + "0123456789" * 2
        x = 60 + np.arange(len(text)) * 22.0
        y = 80 + i * 40.0
        lines.append(ExtractorLine(text, np.stack([x, np.full_like(x, y), x + 20, np.full_like(x, y + 26)], -1)))
    return ExtractorPage(lines, 1240, 1754)


@pytest.mark.slow
@pytest.mark.skipif(not (WEIGHTS / "inference.json").is_file(), reason="no exported extractor in models/weights")
def test_exported_extractor_runs() -> None:
    from stages.extraction.ernie import ErnieExtractor

    ext = ErnieExtractor()
    page = _demo_page()
    n_chars = sum(len(ln.text) for ln in page.lines)
    assert n_chars > ext.meta.max_len  # several windows
    res = ext.extract(page)
    assert len(res.char_probs) == len(page.lines)
    for ln, p in zip(page.lines, res.char_probs):
        assert p.shape == (len(ln.text), len(ext.meta.labels))
        np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-4)
    for s in res.spans:
        assert s.field in FIELDS and 0.0 <= s.prob <= 1.0
        assert s.text == "".join(page.lines[li].text[ci] for li, ci in s.chars)
    batch = ext.extract_batch([page, ExtractorPage([], 100, 100), page])
    assert not isinstance(batch[1], Exception) and batch[1].spans == ()
    np.testing.assert_allclose(np.concatenate(batch[2].char_probs), np.concatenate(res.char_probs), atol=1e-5)
    ext.extract(page)
