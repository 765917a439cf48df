"""Unit and property-style tests of stages.postprocess.values."""
from __future__ import annotations

import random
from datetime import date, timedelta
from decimal import Decimal

import pytest

from stages.postprocess.values import (
    ISSUE_AMOUNT,
    ISSUE_AMOUNT_CUT_OFF,
    ISSUE_AMOUNT_GROUPING,
    ISSUE_AMOUNT_MISMATCH,
    ISSUE_COMPANY_CUT,
    ISSUE_DATE,
    ISSUE_EMPTY,
    ISSUE_ID_BIRTHDATE,
    ISSUE_ID_CHECKSUM,
    ISSUE_ID_FORMAT,
    ISSUE_NAME_CUT,
    ISSUE_PHONE,
    ISSUE_YEAR_RESTORED,
    Normalized,
    date_spans,
    fix_digit_lookalikes,
    format_amount,
    id_check_char,
    nfkc,
    normalize_amount,
    normalize_beneficiary,
    normalize_code,
    normalize_date,
    normalize_id_number,
    normalize_name,
    normalize_phone,
    normalize_company,
    normalize_text,
    parse_arabic_amount,
    parse_chinese_amount,
)

TODAY = date(2026, 6, 1)

# ----------------------------------------------------------------------------------------------------------- dates


@pytest.mark.parametrize("text, expected", [
    ("2026年1月1日零时起", "2026-01-01"),
    ("2026年01月01日", "2026-01-01"),
    ("2026/1/1", "2026-01-01"),
    ("2026-01-01", "2026-01-01"),
    ("2026.1.1", "2026-01-01"),
    ("二〇二六年一月一日", "2026-01-01"),
    ("二零二六年元月十五日", "2026-01-15"),
    ("2027年1月1日二十四时止", "2027-01-01"),
    ("2026 年 1 月 1 日", "2026-01-01"),
    ("２０２６年１月１日", "2026-01-01"),
    ("２０２６－０１－０１", "2026-01-01"),
    ("2026年12月31日24时止", "2026-12-31"),
    ("二〇二六年十二月三十一日", "2026-12-31"),
    ("二〇二六年十月二十日", "2026-10-20"),
    ("二〇二六年十一月十日", "2026-11-10"),
    ("二〇二六年二月二十九日", None),  # 2026 is not a leap year
    ("二〇二四年二月二十九日", "2024-02-29"),
    ("2024年2月29日", "2024-02-29"),
    ("2000-02-29", "2000-02-29"),
    ("自2026年3月5日零时起", "2026-03-05"),
    ("2026-01-01 00:00", "2026-01-01"),
    ("2026/1/1 0:00", "2026-01-01"),
    ("2026-01-0100:00", "2026-01-01"),
    ("20260101", "2026-01-01"),
    ("2O26年1月1曰", "2026-01-01"),  # OCR: letter O for zero, 曰 for 日
    ("20 26年1月1日", "2026-01-01"),  # a space inside the year
    ("二〇二六 年 一 月 十五 日", "2026-01-15"),
    ("2026年3月1号", "2026-03-01"),
    ("二0四四年七月十二日二十四时", "2044-07-12"),  # OCR: digit 0 for 〇
    ("2025年四月十七日", "2025-04-17"),
    ("二〇·九年二月十二日零时起", "2019-02-12"),  # a faint 一 read as a dot
    ("二〇-九年二月十二日", "2019-02-12"),  # ... or as a dash
    ("2-19年二月十二日", None),  # a dash among Arabic digits is no 一
    ("-〇一九年二月十二日", None),
    ("签单日期：2024,08.21", "2024-08-21"),  # one of two dots read as a comma
    ("2024.08,21", "2024-08-21"),
    ("2024,08,21", None),  # two commas: no printed date
    ("2024,08-21", None),
])
def test_dates(text: str, expected: str | None) -> None:
    n = normalize_date(text)
    if expected is None:
        assert n == Normalized(None, (ISSUE_DATE,))
    else:
        assert n == Normalized(expected)
        assert n.valid


@pytest.mark.parametrize("text", [
    "2026年2月30日", "2026-02-29", "2026年13月1日", "2026-04-31", "2026年0月1日", "2026/1/0",
    "1899-12-31", "无", "一年", "2026年", "终身", "abc",
])
def test_invalid_dates(text: str) -> None:
    assert normalize_date(text) == Normalized(None, (ISSUE_DATE,))


def test_empty_date() -> None:
    assert normalize_date("  ") == Normalized(None, (ISSUE_EMPTY,))


def test_date_takes_first_of_period() -> None:
    assert normalize_date("自2026年1月1日零时起至2027年1月1日二十四时止").value == "2026-01-01"


@pytest.mark.parametrize("text, expected", [
    ("二一八年四月四日", "2018-04-04"),
    ("至二四八年三月二十二日二十四时", "2048-03-22"),
    ("二一〇年五月一日", "2010-05-01"),  # the first of two 〇 dropped
    ("〇一九年十二月十九日", "2019-12-19"),  # the 二 dropped
])
def test_a_dropped_circle_is_put_back_into_a_chinese_year_and_flagged(text: str, expected: str) -> None:
    n = normalize_date(text)
    assert n == Normalized(expected, (ISSUE_YEAR_RESTORED,)) and not n.valid  # a person checks a restored year


@pytest.mark.parametrize("text", ["三一八年四月四日", "十二四八年三月", "二〇八年四月四日"])  # not 2xxx, or ambiguous
def test_other_three_digit_years_stay_unparsed(text: str) -> None:
    assert normalize_date(text) == Normalized(None, (ISSUE_DATE,))


def test_date_spans_index_into_text() -> None:
    text = "保险期间:自2026年1月1日零时起至二〇二七年一月一日二十四时止"
    spans = date_spans(text)
    assert [text[s:e] for s, e in spans] == ["2026年1月1日", "二〇二七年一月一日"]


def test_every_day_of_a_leap_and_a_common_year_round_trips() -> None:
    d = date(2023, 1, 1)
    while d < date(2025, 1, 1):
        for text in (f"{d.year}年{d.month}月{d.day}日", f"{d.year}-{d.month:02d}-{d.day:02d}",
                     f"{d.year}/{d.month}/{d.day}", f"{d.year}.{d.month}.{d.day}", _chinese_date(d)):
            assert normalize_date(text).value == d.isoformat(), text
        d += timedelta(days=1)


def _chinese_date(d: date) -> str:
    digits = "〇一二三四五六七八九"

    def small(n: int) -> str:
        if n < 10:
            return digits[n]
        tens, ones = divmod(n, 10)
        return ("" if tens == 1 else digits[tens]) + "十" + (digits[ones] if ones else "")

    return "".join(digits[int(c)] for c in str(d.year)) + "年" + small(d.month) + "月" + small(d.day) + "日"


# ----------------------------------------------------------------------------------------------------------- amounts


@pytest.mark.parametrize("text, expected", [
    ("¥500,000.00", "500000.00"),
    ("￥500,000.00", "500000.00"),
    ("500,000元", "500000.00"),
    ("50万元", "500000.00"),
    ("50万", "500000.00"),
    ("1.5万元", "15000.00"),
    ("0.5万元", "5000.00"),
    ("人民币伍拾万元整", "500000.00"),
    ("人民币伍拾万元整（¥500,000.00）", "500000.00"),
    ("叁仟贰佰伍拾陆元伍角", "3256.50"),
    ("壹佰元零伍分", "100.05"),
    ("壹万零伍佰元整", "10500.00"),
    ("RMB 500000", "500000.00"),
    ("RMB500,000.00", "500000.00"),
    ("¥ 5, 000. 00", "5000.00"),
    ("５００，０００元", "500000.00"),
    ("壹亿元整", "100000000.00"),
    ("壹亿贰仟万元整", "120000000.00"),
    ("壹亿零伍拾万元", "100500000.00"),
    ("拾万元整", "100000.00"),
    ("壹拾万元整", "100000.00"),
    ("贰拾万零叁拾元", "200030.00"),
    ("壹仟零壹元", "1001.00"),
    ("壹万伍仟元整", "15000.00"),
    ("伍角", "0.50"),
    ("伍角伍分", "0.55"),
    ("零元伍分", "0.05"),
    ("零元整", "0.00"),
    ("叁仟贰佰伍拾陆圆伍角整", "3256.50"),
    ("五十万元", "500000.00"),
    ("一千二百元", "1200.00"),
    ("伍拾万元整（小写：¥500,000.00）", "500000.00"),
    ("500000.00元（大写：伍拾万元整）", "500000.00"),
    ("¥1,234.5", "1234.50"),
    ("¥1,234.567", "1234567.00"),  # no yuan amount has 3 decimals: a misread thousands comma
    ("3000", "3000.00"),
    ("2亿元", "200000000.00"),
])
def test_amounts(text: str, expected: str) -> None:
    assert normalize_amount(text) == Normalized(expected)


@pytest.mark.parametrize("text", ["人民币元整", "无", "abc", "壹佰伍", "伍伍元", "伍拾叁佰元", "佰元", "元角"])
def test_unparseable_amounts(text: str) -> None:
    assert normalize_amount(text) == Normalized(None, (ISSUE_AMOUNT,))


@pytest.mark.parametrize("text, arabic", [
    ("人民币伍拾万元整（¥400,000.00）", "400000.00"),
    ("伍万元整 ¥50,000.01", "50000.01"),
    ("¥500,000.00 大写：伍拾伍万元整", "500000.00"),
])
def test_amount_mismatch_keeps_arabic(text: str, arabic: str) -> None:
    assert normalize_amount(text) == Normalized(arabic, (ISSUE_AMOUNT_MISMATCH,))


@pytest.mark.parametrize("text, value", [
    ("1171,455元", "1171455.00"),  # 171,455 with a digit added, or 1,171,455 with a comma lost
    ("¥12,34.00", "1234.00"),
    ("1234,567", "1234567.00"),
])
def test_thousands_commas_out_of_step_are_flagged(text: str, value: str) -> None:
    assert normalize_amount(text) == Normalized(value, (ISSUE_AMOUNT_GROUPING,))


@pytest.mark.parametrize("text, value", [
    ("RMB1,500000.00", "1500000.00"),  # 1,500,000.00 with its second comma unread: every digit is there
    ("￥12,000000000", "12000000000.00"),
    ("3,000000元", "3000000.00"),
])
def test_a_comma_gone_unread_keeps_the_amount_in_step(text: str, value: str) -> None:
    assert normalize_amount(text) == Normalized(value, ())


def test_a_group_that_lost_a_digit_stays_out_of_step() -> None:
    assert normalize_amount("RMB300,00.00") == Normalized("30000.00", (ISSUE_AMOUNT_GROUPING,))
    assert normalize_amount("2,60000元") == Normalized("260000.00", (ISSUE_AMOUNT_GROUPING,))


@pytest.mark.parametrize("text, value", [
    ("29783..80元", "29783.00"),  # a doubled full stop: the parse stops before the cents
    ("RMB59.386.S8", "59386.00"),  # a cent digit read as a letter
    ("¥1,000.00,2", "1000.00"),
])
def test_an_amount_that_goes_on_past_its_parse_is_flagged(text: str, value: str) -> None:
    assert normalize_amount(text) == Normalized(value, (ISSUE_AMOUNT_CUT_OFF,))


@pytest.mark.parametrize("text, value", [
    ("人民币柒万肆仟贰佰储拾伍元", "74200.00"),  # 陆 misread: the parse stops before 拾伍元
    ("伍拾贰万别仟元整", "520000.00"),  # 捌 misread
    ("柒拾万零叁拾玖园捌角肆分", "700039.00"),  # 圆 misread: the cents are lost
])
def test_a_capital_amount_broken_by_a_misread_character_is_flagged(text: str, value: str) -> None:
    assert normalize_amount(text) == Normalized(value, (ISSUE_AMOUNT_CUT_OFF,))


@pytest.mark.parametrize("text, value", [
    ("伍拾万元整，保费叁仟元", "500000.00"),  # a whole amount, then another
    ("伍拾万每份", "500000.00"),
    ("陆仟壹佰贰拾叁元零伍分", "6123.05"),
])
def test_a_whole_capital_amount_is_no_cut(text: str, value: str) -> None:
    assert normalize_amount(text) == Normalized(value)


@pytest.mark.parametrize("text, value", [
    ("29783.80元。", "29783.80"),
    ("1,234.00.（大写）", "1234.00"),
    ("¥500,000.00元/年", "500000.00"),
    ("保费￥6.013.80", "6013.80"),  # thousands dot read as a full stop: repaired, not cut off
    ("·.·800000..00", "800000.00"),  # a doubled full stop before zero cents loses nothing
])
def test_punctuation_after_a_whole_amount_is_no_issue(text: str, value: str) -> None:
    assert normalize_amount(text) == Normalized(value)


def test_amount_malformed_capital_falls_back_to_arabic() -> None:
    assert normalize_amount("伍伍元（¥55.00）") == Normalized("55.00")


def test_amounts_are_decimals_never_floats() -> None:
    assert parse_arabic_amount("¥0.10") + parse_arabic_amount("¥0.20") == Decimal("0.30")
    assert format_amount(Decimal("1E+5")) == "100000.00"


_CAP = "零壹贰叁肆伍陆柒捌玖"


def _capital(n_fen: int) -> str:
    """Reference formatter: fen -> formal 大写 (written independently of the parser under test)."""
    yuan, fen = divmod(n_fen, 100)

    def four(n: int) -> str:
        out, zero = "", False
        for unit, div in (("仟", 1000), ("佰", 100), ("拾", 10), ("", 1)):
            d = n // div % 10
            if d:
                if zero and out:
                    out += "零"
                out += _CAP[d] + unit
                zero = False
            else:
                zero = True
        return out

    parts, pending_zero = "", False
    for unit, div in (("亿", 10**8), ("万", 10**4), ("", 1)):
        block = yuan // div % 10**4 if div < 10**8 else yuan // div
        if block:
            if parts and (pending_zero or block < 1000):
                parts += "零"
            parts += four(block) + unit
            pending_zero = False
        elif parts:
            pending_zero = True
    text = (parts or "零") + "元"
    jiao, f = divmod(fen, 10)
    if not fen:
        return text + "整"
    if jiao:
        text += _CAP[jiao] + "角"
    elif yuan:
        text += "零"
    if f:
        text += _CAP[f] + "分"
    return text


@pytest.mark.parametrize("seed", range(5))
def test_amount_round_trip_many_formats(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        fen = rng.choice([rng.randrange(0, 10**4), rng.randrange(0, 10**9), rng.randrange(0, 10**12) // 100 * 100])
        value = Decimal(fen) / 100
        expected = f"{value:.2f}"
        yuan = fen // 100
        forms = [
            f"¥{value:,.2f}", f"￥{value:,.2f}", f"{value:.2f}元", f"RMB {value:.2f}", f"人民币{value:,.2f}元",
            _capital(fen), f"人民币{_capital(fen)}", f"人民币{_capital(fen)}（¥{value:,.2f}）",
            f"{value:,.2f}元（大写：{_capital(fen)}）",
        ]
        if fen % 100 == 0:
            forms += [f"{yuan:,}元", f"{yuan}"]
        if fen % 100 == 0 and yuan % 10000 == 0 and yuan:
            forms += [f"{yuan // 10000}万元", f"{yuan // 10000}万"]
        for text in forms:
            assert normalize_amount(text) == Normalized(expected), (text, expected)


def test_parse_chinese_amount_direct() -> None:
    assert parse_chinese_amount("壹佰元零伍分") == Decimal("100.05")
    assert parse_chinese_amount("50万元") is None
    # a lone unit is the rest of an amount whose digits were lost, not ten (or a million) yuan
    assert parse_chinese_amount("拾") is None and parse_chinese_amount("佰万") is None
    assert parse_chinese_amount("拾元") == Decimal("10.00")
    assert parse_chinese_amount("拾万元整") == Decimal("100000.00")
    assert parse_chinese_amount("abc") is None


# ----------------------------------------------------------------------------------------------------------- IDs


def _make_id(rng: random.Random, born: date) -> str:
    first17 = f"{rng.randrange(110000, 660000)}{born:%Y%m%d}{rng.randrange(0, 1000):03d}"
    return first17 + id_check_char(first17)


@pytest.mark.parametrize("text, expected", [
    ("11010519900307451X", "11010519900307451X"),
    ("11010519900307451x", "11010519900307451X"),
    ("110105 19900307 451X", "11010519900307451X"),
    ("110105199003074 51X", "11010519900307451X"),
    ("１１０１０５１９９００３０７４５１Ｘ", "11010519900307451X"),
    ("11010519900307451×", "11010519900307451X"),
    ("11010519491231002X", "11010519491231002X"),  # the example of GB 11643
])
def test_id_cleaning(text: str, expected: str) -> None:
    assert normalize_id_number(text, TODAY) == Normalized(expected)


def test_id_checksum() -> None:
    assert normalize_id_number("110105199003074510", TODAY) == Normalized("110105199003074510", (ISSUE_ID_CHECKSUM,))


@pytest.mark.parametrize("text", ["1101051990030745", "11010519900307451", "1101051990030745123",
                                  "11010519900307451Y", "X10105199003074510", "1101051990030A451X"])
def test_id_format(text: str) -> None:
    assert normalize_id_number(text, TODAY).issues == (ISSUE_ID_FORMAT,)


def test_id_birthdate_future_and_invalid() -> None:
    rng = random.Random(1)
    future = _make_id(rng, TODAY + timedelta(days=1))
    assert normalize_id_number(future, TODAY).issues == (ISSUE_ID_BIRTHDATE,)
    assert normalize_id_number(future, TODAY + timedelta(days=1)).valid  # relative to the given today
    born_today = _make_id(rng, TODAY)
    assert normalize_id_number(born_today, TODAY).valid
    old = _make_id(rng, date(1899, 12, 31))
    assert normalize_id_number(old, TODAY).issues == (ISSUE_ID_BIRTHDATE,)
    feb30 = "11010519900230" + "123"
    assert normalize_id_number(feb30 + id_check_char(feb30), TODAY).issues == (ISSUE_ID_BIRTHDATE,)
    both = "11010519900230123" + ("0" if id_check_char("11010519900230123") != "0" else "1")
    assert normalize_id_number(both, TODAY).issues == (ISSUE_ID_BIRTHDATE, ISSUE_ID_CHECKSUM)


def test_id_leap_day_birth() -> None:
    leap = "11010520000229123"
    assert normalize_id_number(leap + id_check_char(leap), TODAY).valid
    not_leap = "11010519000229123"  # 1900 is not a leap year
    assert normalize_id_number(not_leap + id_check_char(not_leap), TODAY).issues == (ISSUE_ID_BIRTHDATE,)


def test_x_check_digit_and_lower_case() -> None:
    rng = random.Random(7)
    while True:
        id_number = _make_id(rng, date(1985, 5, 5))
        if id_number.endswith("X"):
            break
    assert normalize_id_number(id_number.lower(), TODAY) == Normalized(id_number)


@pytest.mark.parametrize("seed", range(3))
def test_random_valid_ids_always_validate(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        born = date(1900, 1, 1) + timedelta(days=rng.randrange((TODAY - date(1900, 1, 1)).days + 1))
        id_number = _make_id(rng, born)
        assert normalize_id_number(id_number, TODAY) == Normalized(id_number), id_number


@pytest.mark.parametrize("seed", range(3))
def test_any_single_character_change_is_caught(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _ in range(300):
        id_number = _make_id(rng, date(1950, 1, 1) + timedelta(days=rng.randrange(20000)))
        pos = rng.randrange(18)
        alphabet = "0123456789X" if pos == 17 else "0123456789"
        new = rng.choice([c for c in alphabet if c != id_number[pos]])
        changed = id_number[:pos] + new + id_number[pos + 1:]
        n = normalize_id_number(changed, TODAY)
        assert not n.valid, (id_number, changed)
        assert ISSUE_ID_CHECKSUM in n.issues or ISSUE_ID_BIRTHDATE in n.issues


def test_adjacent_transposition_is_caught() -> None:
    rng = random.Random(5)
    for _ in range(300):
        id_number = _make_id(rng, date(1970, 1, 1) + timedelta(days=rng.randrange(15000)))
        pos = rng.randrange(16)
        if id_number[pos] == id_number[pos + 1]:
            continue
        swapped = id_number[:pos] + id_number[pos + 1] + id_number[pos] + id_number[pos + 2:]
        assert not normalize_id_number(swapped, TODAY).valid


def test_empty_id() -> None:
    assert normalize_id_number("   ", TODAY) == Normalized(None, (ISSUE_EMPTY,))


# ----------------------------------------------------------------------------------------------------------- phones


@pytest.mark.parametrize("text, expected", [
    ("13812345678", "13812345678"),
    ("138-1234-5678", "13812345678"),
    ("138 1234 5678", "13812345678"),
    ("+86 138 1234 5678", "13812345678"),
    ("+86-13812345678", "13812345678"),
    ("86 13812345678", "13812345678"),
    ("(+86)138-1234-5678", "13812345678"),
    ("0086 13812345678", "13812345678"),
    ("１３８１２３４５６７８", "13812345678"),
    ("19912345678", "19912345678"),
])
def test_phones(text: str, expected: str) -> None:
    assert normalize_phone(text) == Normalized(expected)


@pytest.mark.parametrize("text", ["95511", "400-820-8888", "010-12345678", "12812345678", "1381234567",
                                  "138123456789", "8613812345678x"])
def test_bad_phones(text: str) -> None:
    n = normalize_phone(text)
    assert n.issues == (ISSUE_PHONE,)
    assert not n.valid


# ------------------------------------------------------------------------------------------------------ names and text


@pytest.mark.parametrize("text, expected", [
    ("张 三", "张三"), (" 李四 ", "李四"), ("ＡＢＣ", "ABC"), ("阿卜杜·热合曼", "阿卜杜·热合曼"), ("：王五", "王五"),
])
def test_names(text: str, expected: str) -> None:
    assert normalize_name(text) == Normalized(expected)


@pytest.mark.parametrize("text, expected", [
    ("法定", "法定"), ("法定继承人", "法定"), ("法定受益人", "法定"), (" 法定 继承人 ", "法定"),
    ("被保险人的法定继承人", "法定"), ("王五", "王五"),
    ("法定维承人", "法定"), ("法定继永人", "法定"), ("法主继承人", "法定"), ("去定继承人", "法定"), ("法定人", "法定人"), ("法定继承", "法定继承"),  # OCR misreads
])
def test_beneficiary(text: str, expected: str) -> None:
    assert normalize_beneficiary(text) == Normalized(expected)


def test_a_compound_surname_alone_is_an_incomplete_name() -> None:
    assert normalize_name("端木") == Normalized("端木", (ISSUE_NAME_CUT,))
    assert normalize_beneficiary("欧阳") == Normalized("欧阳", (ISSUE_NAME_CUT,))
    assert normalize_name("端木天") == Normalized("端木天") and normalize_name("王") == Normalized("王")


def test_policy_number_and_text() -> None:
    assert normalize_code(" p2026 0001 2345 ") == Normalized("P202600012345")
    assert normalize_code("ＰＡ２０２６－０１") == Normalized("PA2026-01")
    assert normalize_text("中国平安 人寿保险股份有限公司") == Normalized("中国平安人寿保险股份有限公司")
    assert normalize_text("平安福终身寿险（分红型）") == Normalized("平安福终身寿险(分红型)")
    assert normalize_text("北京市 朝阳区 建国路８８号") == Normalized("北京市朝阳区建国路88号")
    assert normalize_text("  ") == Normalized(None, (ISSUE_EMPTY,))
    assert nfkc("１２３ＡＢ") == "123AB"


def test_a_company_name_cut_before_its_last_character_is_completed() -> None:
    assert normalize_company("锦程财产保险股份有限公") == Normalized("锦程财产保险股份有限公司")
    assert normalize_company("国泰安和人寿保险有限责任公") == Normalized("国泰安和人寿保险有限责任公司")
    assert normalize_company("锦程财产保险股份有限公司") == Normalized("锦程财产保险股份有限公司")
    assert normalize_company("锦程公") == Normalized("锦程公")


def test_a_trade_name_of_one_character_is_an_incomplete_company_name() -> None:
    assert normalize_company("海人寿保险股份有限公司") == Normalized("海人寿保险股份有限公司", (ISSUE_COMPANY_CUT,))
    assert normalize_company("保险股份有限公司") == Normalized("保险股份有限公司", (ISSUE_COMPANY_CUT,))
    assert normalize_company("泰财产保险股份有限公") == Normalized("泰财产保险股份有限公司", (ISSUE_COMPANY_CUT,))
    for whole in ("中国人寿保险股份有限公司", "国寿财产保险股份有限公司", "海晟人寿", "太平洋健康保险股份有限公司"):
        assert normalize_company(whole) == Normalized(whole)


@pytest.mark.parametrize("text, expected", [
    ("2O26", "2026"), ("l38", "138"), ("1OO", "100"), ("1OOOO", "10000"), ("ABC", "ABC"), ("O", "O"),
    ("RMB 5OO", "RMB 500"), ("11O1O519900307451X", "11010519900307451X"), ("Iol", "Iol"),
])
def test_fix_digit_lookalikes(text: str, expected: str) -> None:
    assert fix_digit_lookalikes(text) == expected


def test_lookalikes_in_numeric_fields() -> None:
    assert normalize_phone("l38-l234-5678") == Normalized("13812345678")
    assert normalize_id_number("11O1O519900307451X", TODAY) == Normalized("11010519900307451X")
    assert normalize_amount("¥5OO,OOO.OO") == Normalized("500000.00")


def test_thousands_comma_read_as_a_full_stop():
    from stages.postprocess.values import normalize_amount

    assert normalize_amount("￥23.392.70").value == "23392.70"
    assert normalize_amount("242.000元").value == "242000.00"  # 3 decimals: a misread thousands comma
    assert normalize_amount("1.235万元").value == "12350.00"  # but not before 万
    assert normalize_amount("12.50元").value == "12.50"
    assert normalize_amount("1.090.000").value == "1090000.00"
    assert normalize_amount("RMB2.300000.00").value == "2300000.00"  # one comma lost, the other read as a dot
    assert normalize_amount("1.5万元").value == "15000.00"
    assert normalize_amount("3,589.90元").value == "3589.90"
    assert normalize_amount("500.000.00元").value == "500000.00"
    assert normalize_amount("1.500.000.00").value == "1500000.00"
    assert normalize_amount("1.5万元").value == "15000.00"
    assert normalize_amount("¥3,256.50").value == "3256.50"


@pytest.mark.parametrize("text, value", [
    ("...1,790,000元", "1790000.00"),  # dotted leader before the number
    ("……7,628.60元", "7628.60"),
    (".50,000元", "50000.00"),
    ("10.550.00", "10550.00"),  # a dot after a digit still separates groups or decimals
    ("12.5万元", "125000.00"),
])
def test_a_leader_dot_before_an_amount_is_no_decimal_point(text: str, value: str) -> None:
    assert normalize_amount(text).value == value


def test_the_variant_of_a_capital_three_is_three_inside_an_amount_only() -> None:
    assert normalize_amount("捌拾肆万参仟参佰玖拾肆元陆角玖分（￥843，394.69）") == Normalized("843394.69")
    assert normalize_amount("参佰万元整") == Normalized("3000000.00")
    assert parse_chinese_amount("参") is None and normalize_amount("参考") == Normalized(None, ("unparseable_amount",))


def test_a_capital_amount_cut_short_by_a_misread_is_no_check_of_the_arabic_one() -> None:
    assert normalize_amount("人民币柒拾万零贰任贰佰柒拾肆圆捌角肆分（￥702，274.84）") == Normalized("702274.84")
    assert normalize_amount("人民币柒拾万零贰仟贰佰柒拾肆圆捌角肆分（￥702，274.84）") == Normalized("702274.84")
    assert normalize_amount("人民币柒拾万零贰仟元（￥702，274.84）").issues == (ISSUE_AMOUNT_MISMATCH,)


def test_a_bracket_at_an_edge_that_nothing_closes_is_dropped() -> None:
    assert normalize_text("（金瑞重大疾病保险（2024版）") == Normalized("金瑞重大疾病保险(2024版)")
    assert normalize_text("安康保险(分红型))") == Normalized("安康保险(分红型)")
    assert normalize_text("(北京)") == Normalized("(北京)") and normalize_text("朝阳区(东)") == Normalized("朝阳区(东)")
