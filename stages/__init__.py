"""Pipeline stages: each stage's pre-processing, predictor and post-processing, with the contracts they share (stages/contracts)."""
