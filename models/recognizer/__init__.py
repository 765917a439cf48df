"""The fax recognizer: PP-OCRv4's CTC head re-fitted on binarised line crops (see train.py)."""
