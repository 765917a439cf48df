"""Training code of the learned extraction scorer: OCR cache of synthetic pages, candidate rows, LightGBM fit."""
