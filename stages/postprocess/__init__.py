"""Normalisation and validation of field values (dates, amounts, IDs, phones, names)."""
