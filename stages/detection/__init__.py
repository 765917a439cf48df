"""DBNet text detection: resize, predictor, pure-NumPy DB decoding into page-pixel quadrilaterals."""
