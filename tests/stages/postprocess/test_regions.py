"""The division lexicon: gazetteer structure and fuzzy prefix readings (substitutions and stray characters)."""
from stages.postprocess.regions import Gazetteer, align, gazetteer, readings


def test_gazetteer_from_codes_hangs_municipal_districts_off_the_province():
    g = Gazetteer.from_codes({"110000": "北京市", "110108": "海淀区", "440000": "广东省", "440100": "广州市",
                              "440106": "天河区"})
    assert g.children["110000"] == (("110108", "海淀区"),)
    assert g.children["440000"] == (("440100", "广州市"),)
    assert g.children["440100"] == (("440106", "天河区"),)


def test_bundled_gazetteer_has_every_province_and_thousands_of_counties():
    g = gazetteer()
    assert len(g.provinces) == 34 and len(g.cities) > 300
    assert sum(len(v) for v in g.children.values()) > 3000


def test_align_substitutes_and_deletes_but_never_inserts():
    assert align("昊中区", "吴中区", 1) == ((0, "吴"),)
    assert align("江苏x省", "江苏省", 1) == ((2, None),)
    assert align("x苏省", "江苏省", 1) == ((0, "江"),)  # the first character is substituted, never deleted
    assert align("广州", "广州市", 2) is None  # a missing character is never put back
    assert align("昊巾区", "吴中区", 1) is None  # over budget


def test_exact_prefix_reads_with_no_edits():
    r = readings("广东省广州市天河区学府大道529号")
    assert r[0].names == ("广东省", "广州市", "天河区") and r[0].cost == 0 and r[0].read_len == 9
    assert readings("北京市海淀区中关村")[0].names == ("北京市", "海淀区")


def test_misread_divisions_find_the_valid_prefix():
    names = [r.names for r in readings("内原古自治区呼和浩特市新城区延安街")]
    assert ("内蒙古自治区", "呼和浩特市", "新城区") in names
    names = [r.names for r in readings("江苏省苏州市昊中区青年西路")]
    assert names[0] == ("江苏省", "苏州市", "吴中区")


def test_short_forms_and_non_addresses_give_nothing():
    assert readings("广州天河区体育西路") == []
    assert readings("本公司同意承保") == []


def test_a_lost_province_head_is_found_only_when_its_city_confirms_it() -> None:
    from stages.postprocess.regions import lost_province_head
    assert lost_province_head("苏省无锡市滨湖区朝阳路529号") == "江"
    assert lost_province_head("龙江省哈尔滨市道里区新华路") == "黑"
    assert lost_province_head("西壮族自治区南宁市青秀区") == "广"
    assert lost_province_head("南省长沙市岳麓区") == "湖"  # 长沙 is Hunan's, not Henan's or Hainan's
    assert lost_province_head("江苏省无锡市滨湖区") is None  # nothing lost
    assert lost_province_head("苏省道路") is None  # no city of Jiangsu follows
    assert lost_province_head("无锡市滨湖区") is None  # a short form without its province stays


def test_the_bundled_gazetteers_readings_are_kept_but_never_shared_as_one_list() -> None:
    text = "江苏省苏州市昊中区青年西路"
    first = readings(text)
    assert [r.names for r in first] == [r.names for r in readings(text, gazetteer())]
    first.clear()  # a caller's list is its own: the kept readings stay whole
    assert readings(text)[0].names == ("江苏省", "苏州市", "吴中区")


def test_align_gives_up_when_the_name_has_more_unread_characters_than_its_budget() -> None:
    assert align("朝阳区", "海淀区", 1) is None  # 海 and 淀 are read nowhere: two substitutions at least
    assert align("海阳区", "海淀区", 1) == ((1, "淀"),)


def test_a_character_dropped_inside_a_division_is_put_back_after_exactly_read_divisions() -> None:
    from stages.postprocess.regions import lost_inner
    assert lost_inner("楼区", "鼓楼区") == ((0, "鼓楼"),)
    assert lost_inner("南区", "南山区") == ((1, "山区"),)
    assert lost_inner("天河", "天河区") is None  # the division's kind may be left out; it is never put back
    assert lost_inner("海区", "天河区") is None  # otherwise exact
    r = readings("福建省福州市楼区东风路894号")[0]
    assert r.names == ("福建省", "福州市", "鼓楼区") and r.edits == ((6, "鼓楼"),) and r.read_len == 8
    assert readings("北京市台区幸福北路")[0].names == ("北京市", "丰台区")
    assert readings("广州天河区体育西路") == []  # no insertion after a division that itself needed an edit
