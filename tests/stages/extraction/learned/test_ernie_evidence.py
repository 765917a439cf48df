"""ERNIE-Layout as evidence of the learned decision: its spans become candidates, its probabilities features of
every candidate; where the extractor fails the features are NaN and the decision still runs."""
from __future__ import annotations

import math
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from stages.contracts.config import DocpipeConfig
from stages.contracts.types import Page
from stages.extraction.learned.candidates import DocLines
from stages.extraction.learned.ernie_evidence import ERNIE_FEATURES, SOURCE, ErnieEvidence, run_extractor
from stages.extraction.learned.extract import decide, document_candidates
from stages.extraction.learned.features import FEATURE_NAMES
from stages.extraction.learned.scorer import Scorer
from stages.extraction.stage import ExtractionStage
from tests.stages.extraction.learned.helpers import line

TODAY = date(2026, 6, 1)
WEIGHTS = Path(__file__).resolve().parents[4] / "models" / "weights" / "extractor"
pytestmark = pytest.mark.skipif(not (WEIGHTS / "inference.pdiparams").is_file(), reason="no ERNIE-Layout export")

LINES = [[line("保险单号：P20240518001", 60, 40), line("投保人：张伟", 60, 100),
          line("被保险人：李娜", 60, 160), line("保险金额：人民币 200,000.00 元", 60, 220),
          line("生效日期：2024年05月18日", 60, 280), line("保险期间：2024年05月18日至2025年05月17日", 60, 340)]]
SIZES = [(1240.0, 1754.0)]
COLS = [FEATURE_NAMES.index(n) for n in ERNIE_FEATURES]


@pytest.fixture(scope="module")
def stage() -> ExtractionStage:
    from models.scorer.train import char_dict

    cfg = DocpipeConfig.model_validate({"extraction": {"method": "learned"}, "review": {"calibrated": False}})
    return ExtractionStage(cfg, char_dict())


def _pages() -> list[Page]:
    return [Page(i, np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (int(h), int(w), 3)))
            for i, (w, h) in enumerate(SIZES)]


class _Broken:
    """A predictor that fails every run (the extractor turns that into a StageError per page)."""

    def run(self, *_):
        raise RuntimeError("predictor failed")


def test_ernie_spans_are_candidates_and_its_probabilities_features(stage) -> None:
    ernie = run_extractor(stage.model, LINES, SIZES)
    assert ernie[0] is not None
    dc = document_candidates(LINES, SIZES, TODAY, ernie=ernie)
    assert len(dc.features[0]) == len(FEATURE_NAMES)
    ours = [(i, c) for i, c in enumerate(dc.candidates) if c.source == SOURCE]
    assert {c.key for _, c in ours} >= {"policy_number", "policyholder_name"}
    x = dc.features[:, COLS]
    assert not np.isnan(x).any()
    assert ((x[:, 0] >= 0) & (x[:, 0] <= 1.0001)).all() and (x[:, 1] <= x[:, 0] + 1e-6).all()
    evidence = ErnieEvidence(DocLines.build(LINES, SIZES), ernie, TODAY)
    for i, c in ours:
        row = dict(zip(ERNIE_FEATURES, x[i]))
        assert row["ernie_best_span"] == 1.0 and row["ernie_best_value"] == 1.0
        assert row["ernie_field_best"] == pytest.approx(evidence.best[c.key].prob)
        assert list(x[i]) == pytest.approx(evidence.features(c))
    # the policy number's characters offered as the premium: low probability for that field, high for another one
    number = next(c for _, c in ours if c.key == "policy_number")
    row = dict(zip(ERNIE_FEATURES, evidence.features(replace(number, key="premium"))))
    assert row["ernie_mean"] < 0.5 < row["ernie_other"] and row["ernie_best_span"] == 0.0


def test_without_ernie_the_features_are_missing_and_no_ernie_candidates() -> None:
    dc = document_candidates(LINES, SIZES, TODAY)
    assert all(c.source != SOURCE for c in dc.candidates)
    assert np.isnan(dc.features[:, COLS]).all()
    assert decide(dc, Scorer(None)).fields  # the decision runs on the rest


def test_a_failing_extractor_leaves_the_evidence_missing_and_the_decision_runs(stage, monkeypatch) -> None:
    monkeypatch.setattr(stage.model, "runner", _Broken())
    assert run_extractor(stage.model, LINES, SIZES) == (None,)
    dc = stage.learned_document(LINES, _pages(), TODAY)
    assert dc.candidates and np.isnan(dc.features[:, COLS]).all()
    found = stage(LINES, _pages())
    assert found.fields["policy_number"]["value"] == "P20240518001"


def test_pages_without_lines_are_not_run(stage) -> None:
    ernie = run_extractor(stage.model, [[], LINES[0]], [SIZES[0], SIZES[0]])
    assert ernie[0] is None and ernie[1] is not None
    ev = ErnieEvidence(DocLines.build([[], LINES[0]], [SIZES[0], SIZES[0]]), ernie, TODAY)
    assert all(c.chars[0][0] == 1 for c in ev.candidates)
    assert not any(math.isnan(v) for c in ev.candidates for v in ev.features(c))


def test_a_span_that_cuts_a_token_is_widened_to_it() -> None:
    """A code, number or amount ERNIE-Layout read as its token's start or most of it becomes the whole token on its
    line; a span that cuts none, a short piece inside it, a text field and a span over two lines stay as read."""
    from stages.extraction.learned.ernie_evidence import whole_token

    texts = ["保险金额：800000.00元", "448188222018883616", "E685-1957-203122-22", "联系电话 139-1234-5678",
             "保单号-878126835366666", "上海市浦东新区"]

    def widened(key: str, li: int, start: int, end: int) -> str:
        return whole_token(key, texts[li][start:end], tuple((li, ci) for ci in range(start, end)), texts, TODAY)[0]

    assert widened("sum_insured", 0, 8, 14) == "800000.00"
    assert widened("sum_insured", 0, 5, 7) == "800000.00"  # its start: the decoder stopped early
    assert widened("sum_insured", 0, 10, 14) == "0.00"  # a short piece inside it: no reading of it
    assert widened("policy_number", 1, 8, 18) == "448188222018883616"
    assert widened("policy_number", 2, 5, 19) == "E685-1957-203122-22"
    assert widened("policyholder_phone", 3, 9, 18) == "139-1234-5678"
    assert widened("policy_number", 4, 4, 19) == "878126835366666"  # the leader's hyphen is not the code's
    assert widened("policyholder_address", 5, 0, 5) == "上海市浦东"
    two_lines = ((0, 13), (1, 0))
    assert whole_token("sum_insured", "04", two_lines, texts, TODAY)[1] == two_lines


def test_a_span_inside_a_printed_product_is_widened_to_the_product() -> None:
    """A product span ERNIE-Layout tagged inside the product its line prints (…险 with its qualifiers) that is no
    product by itself becomes that product; a product (even one the line prints with a glued label), a span of
    another field, a span on no product and a span over two lines stay as read."""
    from stages.extraction.learned.ernie_evidence import whole_product

    texts = ["保障项目：福寿安康定期寿险", "险种名称：鑫享两全保险（分红型）", "上海市浦东新区", "险种无忧重大疾病保险"]

    def widened(key: str, li: int, start: int, end: int) -> str:
        return whole_product(key, texts[li][start:end], tuple((li, ci) for ci in range(start, end)), texts)[0]

    assert widened("product_name", 0, 8, 11) == "福寿安康定期寿险"  # 康定期: a piece from its middle
    assert widened("product_name", 1, 5, 11) == "鑫享两全保险"  # a product by itself
    assert widened("product_name", 1, 5, 14) == "鑫享两全保险（分红型）"  # a qualifier cut: no product
    assert widened("product_name", 3, 2, 10) == "无忧重大疾病保险"  # not widened to the glued label 险种
    assert widened("product_name", 0, 5, 13) == "福寿安康定期寿险"
    assert widened("insurer", 0, 8, 11) == "康定期"
    assert widened("product_name", 2, 0, 3) == "上海市"
    two_lines = ((0, 12), (1, 5))
    assert whole_product("product_name", "险鑫", two_lines, texts)[1] == two_lines
