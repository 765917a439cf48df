"""An address that runs to its line's end with unclaimed text aligned just below it may be cut at its wrap; a
label (or a wording like one), a role word, a heading, another field's value or text elsewhere on the page is no
continuation."""
from __future__ import annotations

import numpy as np

from stages.extraction.wrap import continuation_below
from tests.stages.extraction.learned.helpers import line, tilted

LABEL = "住址："
ADDRESS = "四川省成都市武侯区人民路652号和谐家园10栋6单"


def _page(below: str, x: float = 110.0, y: float = 130.0, after: str = "") -> list:
    return [[line(LABEL + ADDRESS + after, 50, 100), line(below, x, y)]]


def _chars(page: int = 0, li: int = 0) -> list[tuple[int, int, int]]:
    return [(page, li, len(LABEL) + i) for i in range(len(ADDRESS))]


def test_text_aligned_just_below_an_address_at_its_lines_end_may_continue_it() -> None:
    assert continuation_below(_chars(), _page("元1702室"), ()) == "元1702室"
    assert continuation_below(_chars(), _page("元1702室", x=50.0), ()) == "元1702室"  # under the label: the line's start


def test_what_is_no_continuation() -> None:
    assert continuation_below(_chars(), _page("元1702室", after="  电话"), ()) is None  # the value stops before its line's end
    assert continuation_below(_chars(), _page("被保险人资料"), ()) is None  # a role word: the next section
    assert continuation_below(_chars(), _page("三"), ()) is None  # a section's number
    assert continuation_below(_chars(), _page("■被保险人"), ()) is None
    assert continuation_below(_chars(), _page("联系电话：13800000000"), ()) is None  # a label
    assert continuation_below(_chars(), _page("13800000000"), ("13800000000",)) is None  # another field's value
    assert continuation_below(_chars(), _page("元1702室", y=200.0), ()) is None  # too far below
    assert continuation_below(_chars(), _page("元1702室", x=600.0), ()) is None  # not aligned with the value
    assert continuation_below([], _page("元1702室"), ()) is None


def test_a_continuation_whose_top_reaches_into_a_skewed_lines_box_is_found() -> None:
    # a skewed line's upright box is taller than its text: the wrapped 室 starts 0.43 of that height above its
    # bottom (dev: …17栋1单元1903 / 室)
    value = line(LABEL + ADDRESS, 50, 100, h=48.0)
    below = line("室", 110.0, 148.0 - 0.43 * 48.0)
    assert continuation_below(_chars(), [[value, below]], ()) == "室"


def test_a_cell_of_a_header_row_below_is_no_continuation() -> None:
    # a table's next band starts below the address: its header cells are bare labels, or the stem of one beside it
    header = [line("保障对象", 110.0, 130.0), line("保障对象证件号", 400.0, 130.0), line("受益人", 700.0, 130.0)]
    assert continuation_below(_chars(), [[line(LABEL + ADDRESS, 50, 100)] + header], ()) is None
    stem = [line("保障对象", 110.0, 130.0), line("保障对象证件号", 400.0, 130.0)]
    assert continuation_below(_chars(), [[line(LABEL + ADDRESS, 50, 100)] + stem], ()) is None


def test_a_continuation_beside_a_value_or_one_label_still_counts() -> None:
    # a wrap's tail shares its row with another column's value, or with a single label (label-above columns)
    beside_value = [line("元1702室", 110.0, 130.0), line("13800000000", 700.0, 130.0)]
    assert continuation_below(_chars(), [[line(LABEL + ADDRESS, 50, 100)] + beside_value], ()) == "元1702室"
    beside_label = [line("元1702室", 110.0, 130.0), line("联系电话", 700.0, 130.0)]
    assert continuation_below(_chars(), [[line(LABEL + ADDRESS, 50, 100)] + beside_label], ()) == "元1702室"
    # a one-character tail is never taken for a header, whatever its row holds
    two_labels = [line("室", 110.0, 130.0), line("联系电话", 500.0, 130.0), line("邮编", 800.0, 130.0)]
    assert continuation_below(_chars(), [[line(LABEL + ADDRESS, 50, 100)] + two_labels], ()) == "室"


def test_a_wording_like_a_known_label_is_no_continuation() -> None:
    # the next person's role in a wording the lexicon lacks, like its labels (被保障人 ~ 被保险人)
    for label in ("被保障人", "要约方身份号码"):
        assert continuation_below(_chars(), _page(label), ()) is None, label
    # an address's tail is unlike every label; one that ends as a place's name stays a tail however label-like
    for tail in ("东方名都", "翠苑小区", "保险大厦"):
        assert continuation_below(_chars(), _page(tail), ()) == tail, tail


def test_a_continuation_on_a_skewed_page_is_read_with_the_skew_undone() -> None:
    """A page turned 4 degrees the other way: the address line's upright box grows 40 px, and the wrapped line
    below, set back to the line's start, lies level with that box's bottom in page pixels but just below the
    address once the page's skew is undone."""
    turn = np.radians(4)
    page = [tilted(ln, turn) for ln in _page("元1702室", x=50.0)[0]]
    assert continuation_below(_chars(), [page], ()) == "元1702室"
    assert continuation_below(_chars(), [[tilted(ln, turn) for ln in _page("元1702室", x=600.0)[0]]], ()) is None
