"""CTC text recognition: crops, packing, the predictor and pure-NumPy CTC decoding."""
