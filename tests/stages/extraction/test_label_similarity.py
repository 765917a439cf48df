"""Label similarity: the bigram and character Dice mix that ranks the fields an unknown wording could name."""
from stages.extraction.label_similarity import best_similarity, field_similarities, label_similarity


def test_equal_wordings_are_one_and_disjoint_ones_zero() -> None:
    assert label_similarity("满期日期", "满期日期") == 1.0
    assert label_similarity("满期日期", "投保人") == 0.0


def test_a_near_wording_is_closer_than_a_far_one() -> None:
    near = label_similarity("满期日期", "满期时间")
    far = label_similarity("满期日期", "保险期间")
    assert 0.0 < far < near < 1.0
    # 0.7 x bigram Dice (满期 shared of 3 + 3) + 0.3 x character Dice (满, 期 of 3 + 4)
    assert abs(near - (0.7 * 2 * 1 / 6 + 0.3 * 2 * 2 / 7)) < 1e-12


def test_best_and_per_field_similarity_take_the_closest_wording() -> None:
    known = ["保险期间", "满期时间", "终止日期"]
    assert best_similarity("满期日期", known) == max(label_similarity("满期日期", k) for k in known)
    assert best_similarity("满期日期", []) == 0.0
    sims = field_similarities("满期日期", {"expiry_date": known, "insured_name": ["被保险人"]})
    assert sims == {"expiry_date": best_similarity("满期日期", known), "insured_name": 0.0}
