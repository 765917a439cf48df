"""Every shipped config keeps the routing promise on a small dev split (at most its
``review.max_document_error_rate`` of wrong documents among those sent straight through), and the check itself:
configs that read pages alike share one OCR pass; wrong straight-through documents are counted."""
from __future__ import annotations

from pathlib import Path

import pytest

from stages.extraction.rules.lexicon import LabelWithholding

from pipeline.tools.config_check import check, reading_key, score, shipped_configs, withheld
from stages.contracts.config import load_config

REPO = Path(__file__).resolve().parents[3]


def _result(values: dict, needs_review: bool) -> dict:
    return {"fields": {k: {"value": v, "confidence": 0.9} for k, v in values.items()}, "needs_review": needs_review,
            "errors": [], "diagnostics": {}}


def test_wrong_documents_sent_straight_through_are_counted():
    truths = [("a", {"fields": {"policy_number": "P1"}}), ("b", {"fields": {"policy_number": "P2"}}),
              ("c", {"fields": {"policy_number": "P3"}})]
    results = [_result({"policy_number": "P1"}, False), _result({"policy_number": "PX"}, False),
               _result({"policy_number": "PY"}, True)]
    row = score(results, truths, 0.08)
    assert row["straight_through"] == 2 and row["wrong_straight_through"] == 1
    assert row["wrong_straight_through_documents"] == ["b"] and not row["meets_target"]
    row = score(results[:1] + results[2:], truths[:1] + truths[2:], 0.08)
    assert row["straight_through"] == 1 and row["wrong_straight_through"] == 0 and row["meets_target"]


def test_the_generator_wordings_file_is_no_shipped_config():
    names = {p.name for p in shipped_configs(REPO / "configs")}
    assert "default.yaml" in names and not {"withheld_wordings.yaml", "withheld_wordings_2.yaml",
                                               "withheld_wordings_3.yaml", "withheld_wordings_4.yaml"} & set(names)


def test_configs_that_read_alike_share_one_ocr_pass():
    default = load_config(REPO / "configs" / "default.yaml")
    assert reading_key(default) == reading_key(load_config(REPO / "configs" / "model.yaml"))
    assert reading_key(default) == reading_key(load_config(REPO / "configs" / "uncalibrated.yaml"))  # threads only
    assert reading_key(default) != reading_key(load_config(REPO / "configs" / "ppocrv5.yaml"))
    assert withheld(0.25, 25) == LabelWithholding(0.25, 25)


@pytest.fixture(scope="module")
def dev_pages(tmp_path_factory) -> list[Path]:
    """Fourteen dev pages: ten clean, four capture variants (fixed seeds, split dev)."""
    from samples.synth.cli import main as synth

    root = tmp_path_factory.mktemp("dev")
    clean, variants = root / "clean", root / "variants"
    assert synth([str(clean), "--n", "10", "--seed", "71", "--split", "dev", "--workers", "1"]) == 0
    assert synth([str(variants), "--n", "4", "--seed", "72", "--split", "dev", "--workers", "1",
                  "--variants", "fax,photo,rotated,multipage"]) == 0
    return [clean, variants]


@pytest.mark.slow
def test_every_shipped_config_keeps_the_routing_promise(dev_pages, tmp_path):
    """A config that cannot start here (optional weights absent) is skipped with its reason; every other one
    sends at most its target share of wrong documents straight through, with full and with withheld wordings."""
    configs = shipped_configs(REPO / "configs")
    assert configs
    rows = []
    for d in dev_pages:
        rows += check(d, configs, cache=tmp_path)
    rows += check(dev_pages[0], configs, withhold=0.25, withhold_seed=25, cache=tmp_path)
    ran = [r for r in rows if "skipped" not in r]
    assert {Path(r["config"]).name for r in ran} >= {"default.yaml", "rules_only.yaml", "hybrid.yaml", "model.yaml"}
    for r in rows:
        if "skipped" in r:
            assert "ModelNotFoundError" in r["skipped"], r  # only optional weights may be missing
    broken = [(r["config"], r["directory"], r["withhold_labels"], r["wrong_straight_through"], r["straight_through"])
              for r in ran if not r["meets_target"]]
    assert not broken, broken
    default = [r for r in ran if Path(r["config"]).name == "default.yaml" and not r["withhold_labels"]]
    assert sum(r["straight_through"] for r in default) > 0  # the promise is not kept by sending nothing through
