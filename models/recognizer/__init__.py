"""Capture recognizers (faxes, photos): PP-OCRv4 with its CTC head re-fitted on line crops of that capture (train.py)
and blended back towards the shipped head (mix.py), or everything after a cut in the network fine-tuned on packed
rows of them (train_tail.py)."""
