"""The label lexicon: longest labels win, and no word is taken from the held-out test labels."""
from __future__ import annotations

from stages.extraction.rules import extract_rules
from stages.extraction.rules.lexicon import FULL_LEXICON, LABELS, build_lexicon, withheld_lexicon
from tests.stages.extraction.rules.helpers import TODAY, key_value_lines


def test_longest_label_wins() -> None:
    assert LABELS["投保人身份证号"].fields == ("policyholder_id_number",)
    assert LABELS["被保险人"].fields == ("insured_name",)
    assert LABELS["保险人"].fields == ("insurer",)
    assert LABELS["客服电话"].kind == "distractor"


def test_lexicon_has_no_word_taken_from_the_held_out_labels() -> None:
    """The test split measures generalization to label wordings never seen in development (samples.synth.labels
    HELD_OUT_LABELS): every hand-written lexicon word that occurs inside a held-out label must also occur in a shared
    (train/dev) label, so held-out labels can only be read through shared words, composition or the unknown-label
    pass. Distractor labels are exempt: they can only suppress a value, never produce one."""
    from samples.synth import labels as synth_labels
    from stages.extraction.rules import lexicon

    shared = [t for ts in synth_labels.SHARED_LABELS.values() for t in ts]
    shared += [t for ts in synth_labels.SECTION_LABELS.values() for t in ts]
    shared += [t for ts in synth_labels.SECTION_TITLES.values() for t in ts] + list(synth_labels.PERIOD_LABELS)
    hand_written = {w for ws in lexicon.FIELD_LABELS.values() for w in ws} | set(lexicon.PERIOD_LABELS)
    hand_written |= {w for ws in lexicon.ATTR_WORDS.values() for w in ws} | set(lexicon.ROLE_WORDS)
    hand_written |= set(lexicon.ATTR_QUALIFIERS) | set(lexicon.SECTION_SUFFIXES) | set(lexicon.BOTH_PARTIES_LABELS)
    hand_written |= set(lexicon.SAME_AS_POLICYHOLDER) | {w for ws in lexicon.DATE_MEANING_WORDS.values() for w in ws}
    leaked = sorted((held, w) for held in synth_labels.all_held_out_labels() for w in hand_written
                    if len(w) >= 2 and w in held and not any(w in s for s in shared))
    assert leaked == []


def test_withheld_lexicon_is_drawn_per_document_and_repeatable() -> None:
    a = withheld_lexicon(0.3, 0, "document one")
    assert withheld_lexicon(0.3, 0, "document one").labels.keys() == a.labels.keys()
    assert withheld_lexicon(0.3, 0, "document two").labels.keys() != a.labels.keys()
    assert withheld_lexicon(0.3, 1, "document one").labels.keys() != a.labels.keys()
    gone = len(FULL_LEXICON.labels) - len(a.labels)
    assert gone == round(0.3 * len(FULL_LEXICON.labels))
    assert set(a.labels) < set(FULL_LEXICON.labels)
    for key, texts in a.by_field.items():
        assert all(t in a.labels for t in texts), key
    assert withheld_lexicon(0.0, 0, "x").labels.keys() == FULL_LEXICON.labels.keys()


def test_rules_without_a_label_fall_back_and_keep_it_out_of_the_pattern() -> None:
    lines = key_value_lines()
    full = extract_rules(lines, TODAY)
    assert full["sum_insured"].method == "label"
    fewer = build_lexicon(withheld=[t for t in FULL_LEXICON.labels if "保险金额" in t])
    assert "保险金额" not in fewer.labels and fewer.pattern.search("保险金额：") is None
    res = extract_rules(lines, TODAY, fewer)
    got = res["sum_insured"]
    assert got is None or got.method != "label"  # found, if at all, through a label outside the lexicon
    assert res["premium"].method == "label" and res["premium"].value == full["premium"].value


def test_learned_wordings_extend_the_lexicon_with_their_owner_role() -> None:
    from stages.extraction.rules.lexicon import extend_lexicon
    from tests.stages.extraction.rules.helpers import INS_ID, rows

    assert extend_lexicon(FULL_LEXICON, ()) is FULL_LEXICON
    assert extend_lexicon(FULL_LEXICON, [("保险金额", "premium")]) is FULL_LEXICON  # a shipped text stays as it is
    grown = extend_lexicon(FULL_LEXICON, [("联络对象", "insured_name"), ("联络对象", "insured_id_number"),
                                          ("收件处所", "policyholder_address"), ("两可", "premium"), ("两可", "insurer")])
    person = grown.labels["联络对象"]
    assert (person.fields, person.role, person.attr, person.learned) == (("insured_name",), "insured", "name", True)
    assert grown.labels["收件处所"].fields == ("policyholder_address",) and "两可" not in grown.labels
    assert "收件处所" in grown.by_field["policyholder_address"] and "联络对象" not in FULL_LEXICON.labels
    # a learned role word opens a role table's row: the cell under 证件号码 is that person's
    lines = rows(("", "姓名", "证件号码"), ("联络对象", "王小明", INS_ID))
    assert extract_rules(lines, TODAY)["insured_id_number"] is None
    got = extract_rules(lines, TODAY, grown)
    assert got["insured_id_number"].value == INS_ID and got["insured_id_number"].method == "learned_label_below"
    assert got["insured_name"].value == "王小明" and got["insured_name"].method.startswith("learned_")


def test_wordings_hold_every_fields_label_texts_once_and_none_withheld() -> None:
    texts = {t for texts in FULL_LEXICON.by_field.values() for t in texts}
    assert FULL_LEXICON.wordings == tuple(sorted(texts))
    gone = FULL_LEXICON.by_field["policyholder_name"][0]
    assert gone not in build_lexicon([gone]).wordings
