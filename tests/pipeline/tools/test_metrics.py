import numpy as np

from pipeline.tools.metrics import canonical_text, page_cer, total_cer


def _box(x, y, w=100, h=20):
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)


def test_canonical_text_nfkc_spaces_and_leaders():
    assert canonical_text("投保人……………张三") == "投保人张三"
    assert canonical_text("险种........安心 保险") == "险种安心保险"
    assert canonical_text("（１２３）") == "(123)"
    assert canonical_text("2026-01-01") == "2026-01-01"  # two dashes are content, not a leader


def test_page_cer_ignores_segmentation_of_a_row():
    ref = [("保单号码", _box(0, 0)), ("P123", _box(200, 0))]
    hyp = [("保单号码P123", _box(0, 0, 300))]
    assert page_cer(ref, hyp).errors == 0
    bad = page_cer(ref, [("保单号码P128", _box(0, 0, 300))])
    assert bad.errors == 1 and bad.length == 8
    assert abs(total_cer([bad, page_cer(ref, hyp)]) - 1 / 16) < 1e-9
