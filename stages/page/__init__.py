"""Page normalization before extraction: orientation (and, later, document boundary) with recorded transforms."""
