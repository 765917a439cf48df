"""Training and export code (the extractor, the confidence calibrator) and the weights trained here; the runtime never imports it."""
