"""The insurance vocabulary: terms with one misread character are found; exact and distant ones are not."""
from stages.postprocess.terms import INSURER_TERMS, PRODUCT_TERMS, near_terms


def test_one_misread_character_in_a_term_is_found():
    assert near_terms("康乐终身重人疾病保险", PRODUCT_TERMS) == [((5, "大"),)]
    assert near_terms("安和颐年养客保险股份有限公司", INSURER_TERMS) == [((5, "老"),)]
    assert near_terms("颐享平大疾病保险", PRODUCT_TERMS) == [((2, "重"),)]  # six characters: the first may be misread


def test_exact_and_distant_terms_give_nothing():
    assert near_terms("金福终身寿险(2024版)", PRODUCT_TERMS) == []
    assert near_terms("康乐特定疾病保险", PRODUCT_TERMS) == []  # two characters from 重大疾病保险: another kind
    assert near_terms("泰和人寿保险股份有限公司", INSURER_TERMS) == []


def test_short_terms_keep_their_ends():
    assert near_terms("金福终身寿检", PRODUCT_TERMS) == []  # 终身寿险 with its last character misread: not anchored
