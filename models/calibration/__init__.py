"""Field-confidence calibration: fitting (fit.py) and scoring on saved eval reports (replay.py)."""
