from models.extractor.ocr_align import transfer_labels


def _line(text, labels, x0=0, y0=0, w=20, h=20):
    return {"text": text, "labels": labels,
            "char_boxes": [[x0 + i * w, y0, x0 + (i + 1) * w, y0 + h] for i in range(len(text))]}


def test_labels_follow_geometry_across_merged_cells_and_misreads():
    truth = [
        _line("投保人", ["O"] * 3),
        _line("张三", ["B-policyholder_name", "I-policyholder_name"], x0=100),
    ]
    # OCR merged both cells into one line and misread 三 as 二
    ocr = [{"text": "投保人张二", "char_boxes": [[0, 0, 20, 20], [20, 0, 40, 20], [40, 0, 60, 20],
                                                  [101, 1, 119, 19], [121, 1, 139, 19]]}]
    assert transfer_labels(ocr, truth) == [["O", "O", "O", "B-policyholder_name", "I-policyholder_name"]]


def test_bio_is_repaired_when_ocr_splits_a_value():
    truth = [_line("11010519", ["B-policyholder_id_number"] + ["I-policyholder_id_number"] * 7)]
    ocr = [
        {"text": "1101", "char_boxes": [[i * 20, 0, (i + 1) * 20, 20] for i in range(4)]},
        {"text": "0519", "char_boxes": [[80 + i * 20, 0, 80 + (i + 1) * 20, 20] for i in range(4)]},
    ]
    out = transfer_labels(ocr, truth)
    assert out[0][0] == "B-policyholder_id_number"
    assert out[1] == ["I-policyholder_id_number"] * 4  # continues across the split
    far = [{"text": "X", "char_boxes": [[500, 500, 520, 520]]}]
    assert transfer_labels(far, truth) == [["O"]]
