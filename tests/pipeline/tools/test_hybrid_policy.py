"""Choosing the hybrid policy per field from both extractors' dev values."""
from __future__ import annotations

import yaml

from pipeline.tools.hybrid_policy import choose, render, values_from_report
from stages.contracts.config import DocpipeConfig


def test_values_rebuilt_from_the_error_lists() -> None:
    truth = {"a.jpg": {"premium": "1.00", "insurer": "X"}, "b.jpg": {"premium": "2.00", "insurer": None}}
    report = {"errors": [{"document": "a.jpg", "field": "premium", "expected": "1.00", "got": "9.00"}],
              "baseline_errors": [{"document": "b.jpg", "field": "insurer", "expected": None, "got": "Y"}]}
    model, rules = values_from_report(report, truth)
    assert model["a.jpg"] == {"premium": "9.00", "insurer": "X"} and model["b.jpg"] == truth["b.jpg"]
    assert rules["b.jpg"]["insurer"] == "Y" and rules["a.jpg"] == truth["a.jpg"]


def test_choice_follows_the_numbers() -> None:
    docs = [f"d{i}" for i in range(10)]
    truth = {d: {"premium": "1.00", "insurer": "X", "insured_name": "张三"} for d in docs}
    model = {d: {"premium": "1.00", "insurer": "X" if i < 3 else None, "insured_name": "张三" if i else "李四"}
             for i, d in enumerate(docs)}
    rules = {d: {"premium": "1.00" if i < 6 else None, "insurer": "X", "insured_name": "张三" if i > 1 else "王五"}
             for i, d in enumerate(docs)}
    got = {c.key: c for c in choose(truth, model, rules, keys=("premium", "insurer", "insured_name"))}
    assert got["premium"].policy == "rules" and got["premium"].model_first == got["premium"].rules_first == 10
    assert got["insurer"].policy == "rules" and got["insurer"].flagged == 0
    # rules wrong on d0, d1; model wrong on d0: rules-first 8 right, model-first 9 right -> model
    assert got["insured_name"].policy == "model" and got["insured_name"].model_first == 9
    truth2 = {d: {"premium": "1.00"} for d in docs}
    rules2 = {d: {"premium": "1.00" if i else "7.00"} for i, d in enumerate(docs)}
    model2 = {d: {"premium": "1.00" if i else "8.00"} for i, d in enumerate(docs)}
    (c,) = choose(truth2, model2, rules2, keys=("premium",))
    assert c.policy == "agreement" and c.flagged == 1 and c.flagged_wrong == 1  # the one flag catches an error
    rendered = yaml.safe_load(render([c], "test"))
    cfg = DocpipeConfig.model_validate(rendered)
    assert cfg.extraction.policy == {"premium": "agreement"}
