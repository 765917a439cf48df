"""Page normalization before extraction: document boundary, fax smoothing and orientation, with recorded transforms."""
