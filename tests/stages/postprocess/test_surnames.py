"""Surname classes and their priors."""
from stages.postprocess.surnames import COMMON, compound, listed, log_prior, split_surname


def test_common_surnames_are_listed_and_compound_ones_known():
    assert COMMON <= listed()
    assert {"欧阳", "司马", "长孙", "东方"} <= compound()


def test_prior_orders_common_listed_unknown():
    assert log_prior("王") > log_prior("都") > log_prior("昊")


def test_split_surname():
    assert split_surname("欧阳娜") == ("欧阳", "娜")
    assert split_surname("东方") == ("东", "方")  # two characters: a single surname and a given name
    assert split_surname("李雷") == ("李", "雷")
