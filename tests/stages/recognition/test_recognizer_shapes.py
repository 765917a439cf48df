import numpy as np

from stages.recognition.crop import pick_bucket, resize_to_bucket
from stages.recognition.recognizer import (
    BATCH_PIXELS, CTC_STRIDE, PACK_WIDTH, WIDTH_BUCKETS, keep_columns,
)


def test_resize_to_bucket_pads_right_and_squashes_overlong():
    img = np.full((24, 100, 3), 255, np.uint8)
    x, used, bucket = resize_to_bucket(img, 48, (128, 256))
    assert x.shape == (3, 48, 256) and used == 200 and bucket == 256
    assert np.all(x[:, :, used:] == 0)
    long = np.full((10, 1000, 3), 0, np.uint8)
    x, used, bucket = resize_to_bucket(long, 48, (128, 256))
    assert bucket == 256 and used == 256
    assert pick_bucket(129, (128, 256)) == 256


def test_fixed_rows_per_bucket():
    rows = {b: max(1, BATCH_PIXELS // b) for b in WIDTH_BUCKETS}
    assert all(r >= 1 for r in rows.values()) and rows[WIDTH_BUCKETS[0]] >= rows[WIDTH_BUCKETS[-1]]


def test_buckets_are_increasing_multiples_of_the_ctc_stride():
    assert list(WIDTH_BUCKETS) == sorted(set(WIDTH_BUCKETS))
    assert not any(w % CTC_STRIDE for w in WIDTH_BUCKETS + (PACK_WIDTH,))


def test_keep_columns_keeps_blank_strong_and_always():
    probs = np.full((5, 50), 1e-5, np.float32)
    probs[:, 0] = 0.5
    probs[2, 7] = 0.49
    cols = keep_columns(probs, 1e-3, 64, np.array([30, 31]))
    assert list(cols.columns) == [0, 7, 30, 31]
    assert cols.probs.shape == (5, 4) and abs(cols.probs[2, 1] - 0.49) < 1e-6
