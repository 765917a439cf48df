"""Capture recognizers (faxes, photos): PP-OCRv4's CTC head re-fitted on line crops of that capture (see train.py)."""
