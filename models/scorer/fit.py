"""Fit the scorer: a LightGBM binary classifier over candidate feature rows, optionally weighted (reviewers'
corrections weigh more than synthetic rows when a folder is adapted). Returns the runtime
:class:`~stages.extraction.learned.scorer.Scorer`."""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from stages.extraction.learned.features import CATEGORICAL, FEATURE_NAMES
from stages.extraction.learned.scorer import Scorer

PARAMS: dict[str, Any] = {
    "objective": "binary",
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.9,
    "bagging_fraction": 0.9,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "verbose": -1,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
}
ROUNDS = 300


def fit(rows: np.ndarray, labels: np.ndarray, weights: Optional[np.ndarray] = None, seed: int = 0,
        rounds: int = ROUNDS, params: Optional[Mapping[str, Any]] = None) -> Scorer:
    """A scorer fitted on ``rows`` (N, len(FEATURE_NAMES)) with 0/1 ``labels`` and optional per-row ``weights``."""
    import lightgbm as lgb

    rows = np.asarray(rows, np.float32)
    if rows.ndim != 2 or rows.shape[1] != len(FEATURE_NAMES):
        raise ValueError(f"rows must be (N, {len(FEATURE_NAMES)}), got {rows.shape}")
    p = {**PARAMS, **(params or {}), "seed": seed}
    data = lgb.Dataset(rows, label=np.asarray(labels, np.float32), weight=weights,
                       feature_name=list(FEATURE_NAMES), categorical_feature=list(CATEGORICAL),
                       free_raw_data=False)
    booster = lgb.train(p, data, num_boost_round=rounds)
    return Scorer(booster)


def model_text(scorer: Scorer) -> str:
    assert scorer.booster is not None
    return scorer.booster.model_to_string()
