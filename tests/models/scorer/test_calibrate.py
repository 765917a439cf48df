"""The score calibration is monotone, smoothed and keeps absent-field rates per field."""
from __future__ import annotations

from models.scorer.calibrate import fit_calibration, monotone
from stages.extraction.learned.scorer import ScoreCalibrator


def test_monotone_pools_violators() -> None:
    assert monotone([0.2, 0.6, 0.4, 0.9], [1, 1, 1, 1]) == [0.2, 0.5, 0.5, 0.9]


def test_fit_is_monotone_and_never_certain() -> None:
    samples = [{"field": "premium", "found": True, "correct": i % 4 != 0, "truth_absent": False, "score": 0.5}
               for i in range(40)]
    samples += [{"field": "premium", "found": True, "correct": True, "truth_absent": False, "score": 0.9999}
                for _ in range(60)]
    samples += [{"field": "beneficiary_name", "found": False, "correct": True, "truth_absent": True, "score": None}
                for _ in range(8)]
    cal = fit_calibration(samples, "t")
    assert list(cal.iso_y) == sorted(cal.iso_y)
    assert 0.6 < cal.iso_y[0] < 0.8 and cal.iso_y[-1] < 1.0
    assert cal.absent_ok("beneficiary_name") == 0.9
    again = ScoreCalibrator.from_json(cal.to_json())
    assert again == cal
