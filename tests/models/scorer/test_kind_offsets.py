"""The offsets per page capture and field kind raise the confidence of a kind whose values the rules do not share
were right more often than it said, lower it for one wrong more often, stay near 0 where few values speak, ignore
shared values, and are written into a copy of the calibration file that the runtime reads back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.scorer.kind_offsets import fit_offset, fit_offsets
from models.scorer.kind_offsets import main as offsets_main
from stages.extraction.learned.scorer import ScoreCalibrator

CAL = ScoreCalibrator((0.0, 1.0), (0.0, 0.9), {}, 0.5, "t")  # P 0.9 -> confidence 0.81


def _sample(field: str, correct: bool, capture: str = "scan", shared: bool = False) -> dict:
    return {"doc": "d", "field": field, "found": True, "correct": correct, "score": 0.9, "capture": capture,
            "rules_agree": shared, "evidence": {"rec_min": 0.99}}


def test_an_offset_follows_how_often_the_values_were_right() -> None:
    assert fit_offset([(0.0, True, 1.0)] * 50, ridge=1.0) > 1.0
    assert fit_offset([(2.0, False, 1.0)] * 20 + [(2.0, True, 1.0)] * 20, ridge=1.0) < -1.0
    assert abs(fit_offset([(0.0, True, 1.0)] * 2, ridge=100.0)) < 0.02  # few values: the ridge keeps it near 0


def test_offsets_are_fitted_per_capture_and_kind_on_values_the_rules_do_not_share() -> None:
    samples = [_sample("insured_name", True) for _ in range(60)]  # names on scans: always right
    samples += [_sample("premium", i % 2 == 0, "fax") for i in range(60)]  # fax amounts: half wrong
    samples += [_sample("effective_date", False, shared=True) for _ in range(60)]  # shared: not fitted here
    offsets = fit_offsets(CAL, samples, ridge=5.0)
    assert offsets["scan"]["name"] > 0.5 and offsets["fax"]["amount"] < -0.5
    assert "date" not in offsets.get("scan", {})


def test_the_command_writes_a_calibration_the_runtime_reads(tmp_path: Path) -> None:
    report = tmp_path / "ev.json"
    report.write_text(json.dumps({"samples": {"dev/default": [_sample("insured_name", True) for _ in range(40)]}}))
    onto = tmp_path / "cal.json"
    onto.write_text(json.dumps(CAL.to_json()))
    out = tmp_path / "out.json"
    assert offsets_main([str(report), "--label", "dev/default", "--onto", str(onto), "--ridge", "5",
                         "--version", "t2", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    cal = ScoreCalibrator.from_json(written)
    assert cal.version == "t2" and cal.own_kind_offset["scan"]["name"] > 0
    assert written["own_kind_offset_fit"]["ridge"] == 5.0
    with pytest.raises(SystemExit):
        offsets_main([str(report), "--label", "nope/default", "--onto", str(onto), "--version", "t", "--out", str(out)])
