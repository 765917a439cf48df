"""The score calibration is monotone, smoothed, keeps absent-field rates per field and per kind of empty field,
maps values the rules share and values read with an unsure character apart, and each page capture's values by maps
shrunk toward the pooled ones; a report that is missing, or a label no report holds, is refused by name."""
from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace
from typing import Optional

import numpy as np
import pytest

from models.scorer.calibrate import binned_map, capture_groups, draw_weight, fit_calibration, monotone
from models.scorer.calibrate import main as calibrate_main
from stages.extraction.learned.scorer import WEAK_READING, ScoreCalibrator


def test_monotone_pools_violators() -> None:
    assert monotone([0.2, 0.6, 0.4, 0.9], [1, 1, 1, 1]) == [0.2, 0.5, 0.5, 0.9]


def test_fit_is_monotone_and_never_certain() -> None:
    samples = [{"field": "premium", "found": True, "correct": i % 4 != 0, "truth_absent": False, "score": 0.5}
               for i in range(40)]
    samples += [{"field": "premium", "found": True, "correct": True, "truth_absent": False, "score": 0.9999}
                for _ in range(60)]
    samples += [{"field": "beneficiary_name", "found": False, "correct": True, "truth_absent": True, "score": None}
                for _ in range(8)]
    cal = fit_calibration(samples, "t")
    assert list(cal.iso_y) == sorted(cal.iso_y)
    assert 0.6 < cal.iso_y[0] < 0.8 and cal.iso_y[-1] < 1.0
    assert cal.absent_ok("beneficiary_name") == 0.9
    again = ScoreCalibrator.from_json(cal.to_json())
    assert again == cal


def test_paired_samples_fit_where_the_rules_do_not_agree() -> None:
    """With the rules' decision recorded, the map of P is fitted on the values the rules do not share (agreeing
    values have a map of their own), and P(absent) separately for fields the rules found and did not."""
    def s(found, correct, score, agree, rules_found, field="premium", absent=False):
        return {"field": field, "found": found, "correct": correct, "truth_absent": absent, "score": score,
                "rules_agree": agree, "rules_found": rules_found}

    samples = [s(True, True, 0.99, True, True) for _ in range(200)]  # agreed: the shared map, not this one
    samples += [s(True, i % 2 == 0, 0.99, False, True) for i in range(40)]  # disagreed: half right
    samples += [s(False, True, None, False, False, "beneficiary_name", True) for _ in range(8)]
    samples += [s(False, False, None, False, True, "beneficiary_name", False) for _ in range(8)]
    cal = fit_calibration(samples, "t")
    assert cal.iso_y == (0.5,)
    assert cal.absent_ok("beneficiary_name") == 0.9
    assert cal.absent_ok_against_rules("beneficiary_name") == 0.1
    assert ScoreCalibrator.from_json(cal.to_json()) == cal


class _Ev:
    def __init__(self, score: float, rec_min: float, key: Optional[str] = "insured_name"):
        self.score, self.rec_min, self.key = score, rec_min, key


def test_shared_values_get_a_map_of_their_own() -> None:
    """Values the rules' decision shares are mapped by a map of P fitted on them alone (``shared``), and the map of
    P for the other values stays fitted on those; samples without the rules' decision fit no shared map."""
    def s(correct, agree):
        return {"field": "insured_name", "found": True, "correct": correct, "truth_absent": False, "score": 0.9995,
                "rules_agree": agree, "rules_found": True, "evidence": {"rec_min": 0.99}}

    samples = [s(True, True) for _ in range(98)] + [s(False, True) for _ in range(2)]
    samples += [s(i % 2 == 0, False) for i in range(40)]
    cal = fit_calibration(samples, "t", capture_prior=0.0)
    assert cal.shared(_Ev(0.9995, 0.99)) == round(99 / 102, 6)  # 98 of 100, add-one smoothed
    assert cal.iso_y == (0.5,)  # the values the rules do not share: half right
    assert ScoreCalibrator.from_json(cal.to_json()) == cal
    unpaired = [{k: v for k, v in x.items() if k not in ("rules_agree", "rules_found")} for x in samples]
    assert fit_calibration(unpaired, "t").shared(_Ev(0.9995, 0.99)) is None


def test_a_bin_shrinks_toward_the_prior_map_by_its_strength() -> None:
    """With a prior map, a bin's rate is (right values + strength x the prior's rate at the bin's mean P) /
    (values + strength), in place of add-one smoothing: few values stay near the prior, many follow their own
    share."""
    x, y = np.full(10, 0.99), np.array([1.0] * 10)
    assert binned_map(x, y, (0.5,)) == ((0.99,), (round(11 / 12, 6),))  # add-one
    (_,), (rate,) = binned_map(x, y, (0.5,), prior=((0.0, 1.0), (0.9, 0.9)), strength=10.0)
    assert rate == round((10 + 10 * 0.9) / 20, 6)
    x, y = np.full(1000, 0.99), np.array([1.0] * 1000)
    assert binned_map(x, y, (0.5,), prior=((0.0, 1.0), (0.9, 0.9)), strength=10.0)[1][0] > 0.99


def test_each_capture_gets_maps_of_its_own_shrunk_toward_the_pooled_maps() -> None:
    """Shared and unshared values are mapped per capture of their page: faxes, wrong more often at the same P here,
    get lower maps; scans and photos share theirs; strength 0 fits none."""
    def s(correct, agree, capture):
        return {"field": "insured_name", "found": True, "correct": correct, "truth_absent": False, "score": 0.9995,
                "rules_agree": agree, "rules_found": True, "evidence": {"rec_min": 0.99}, "capture": capture}

    samples = [s(True, True, "scan") for _ in range(300)]
    samples += [s(i % 10 != 0, True, "fax") for i in range(100)]  # 10 % wrong on faxes
    samples += [s(True, True, "photo") for _ in range(2)]
    samples += [s(i % 4 != 0, False, "scan") for i in range(40)] + [s(i % 2 == 0, False, "fax") for i in range(40)]
    cal = fit_calibration(samples, "t", capture_prior=10.0)
    ev = _Ev(0.9995, 0.99)
    scan, fax, photo, pooled = (cal.shared(ev, c) for c in ("scan", "fax", "photo", "unknown"))
    assert fax < pooled < scan == photo
    assert cal.confidence(ev, "fax") < cal.confidence(ev, "scan")
    assert ScoreCalibrator.from_json(json.loads(json.dumps(cal.to_json()))) == cal
    flat = fit_calibration(samples, "t", capture_prior=0.0)
    assert flat.shared_by_capture == {} and flat.own_by_capture == {}
    assert flat.shared(ev, "fax") == flat.shared(ev, "scan") == pooled


def test_each_field_kind_gets_maps_of_shared_values_shrunk_toward_the_capture_maps(tmp_path) -> None:
    """With ``kind_prior``, shared values of each field kind get a map per capture, each bin shrunk toward that
    capture's map of shared values: names, wrong more often here, are mapped lower than ID numbers at the same P;
    a kind with few values stays near the capture's map; ``--onto FILE --refit shared:kinds`` shrinks toward FILE's
    capture maps and keeps the rest of FILE."""
    def s(i, field, correct, capture="fax"):
        return {"doc": f"d{i}", "field": field, "found": True, "correct": correct, "truth_absent": False,
                "score": 0.9995, "rules_agree": True, "rules_found": True, "evidence": {"rec_min": 0.99},
                "capture": capture}

    samples = [s(i, "insured_name", i % 10 != 0) for i in range(200)]  # 10 % wrong
    samples += [s(i, "insured_id_number", True) for i in range(200, 400)]
    samples += [s(i, "premium", True) for i in range(400, 402)]
    samples += [s(i, "policy_number", True, "scan") for i in range(402, 602)]
    flat = fit_calibration(samples, "t", kind_prior=0.0)
    assert flat.shared_by_kind == {}
    cal = fit_calibration(samples, "t", kind_prior=20.0)
    fax = cal.shared(_Ev(0.9995, 0.99, key=None), "fax")  # no field kind: the capture's map
    name, id_number, amount = (cal.shared(_Ev(0.9995, 0.99, k), "fax")
                               for k in ("insured_name", "insured_id_number", "premium"))
    assert name < fax < id_number and abs(amount - fax) < abs(id_number - fax)
    assert set(cal.shared_by_kind) == {"name", "id_number", "amount", "code"}
    assert set(cal.shared_by_kind["code"]) == {"scan", "photo"}  # a kind's maps on the captures it was seen on
    assert cal.shared(_Ev(0.9995, 0.99), "scan") == cal.shared(_Ev(0.9995, 0.99, key=None), "scan")
    assert ScoreCalibrator.from_json(json.loads(json.dumps(cal.to_json()))) == cal
    report, base, out = tmp_path / "r.json", tmp_path / "base.json", tmp_path / "out.json"
    report.write_text(json.dumps({"samples": {"a/learned": samples}}), encoding="utf-8")
    low = ((0.5, 1.0), (0.5, 0.6))
    base_cal = replace(flat, shared_by_capture={"scan": low, "photo": low, "fax": low}, null_ok={"premium": 0.3})
    base.write_text(json.dumps(base_cal.to_json()), encoding="utf-8")
    assert calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "shared:kinds",
                           "--kind-prior", "20", "--out", str(out)]) == 0
    onto = ScoreCalibrator.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert dict(onto.shared_by_capture) == dict(base_cal.shared_by_capture) and dict(onto.null_ok) == {"premium": 0.3}
    rate = onto.shared(_Ev(0.9995, 0.99, "premium"), "fax")  # 2 right values shrunk toward 0.6 by 20
    assert rate == round((2 + 20 * float(np.interp(0.9995, *low))) / 22, 6)
    with pytest.raises(SystemExit):  # no kind maps without a strength
        calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "shared:kinds",
                        "--out", str(out)])


def test_capture_groups_decide_which_captures_share_a_map(tmp_path) -> None:
    """``--capture-groups fax;scan;photo`` gives scans a map of their own: photos, wrong more often at the same P
    here, no longer pull the scans' map down; ``--refit shared:scan`` takes only that map onto a file."""
    def s(i, correct, capture):
        return {"doc": f"d{i}", "field": "insured_name", "found": True, "correct": correct, "truth_absent": False,
                "score": 0.97, "rules_agree": True, "rules_found": True, "evidence": {"rec_min": 0.99},
                "capture": capture}

    samples = [s(i, True, "scan") for i in range(300)] + [s(i, i % 5 != 0, "photo") for i in range(300, 400)]
    ev = _Ev(0.97, 0.99)
    pooled, apart = (fit_calibration(samples, "t", capture_groups=g) for g in (
        (("fax",), ("scan", "photo")), (("fax",), ("scan",), ("photo",))))
    assert pooled.shared(ev, "scan") == pooled.shared(ev, "photo")
    assert apart.shared(ev, "photo") < pooled.shared(ev, "scan") < apart.shared(ev, "scan")
    assert capture_groups("fax;scan,photo") == (("fax",), ("scan", "photo"))
    assert capture_groups(" fax ; scan ; photo ") == (("fax",), ("scan",), ("photo",))
    with pytest.raises(Exception):
        capture_groups("fax;scan,fax")
    report, base, out = tmp_path / "r.json", tmp_path / "base.json", tmp_path / "out.json"
    report.write_text(json.dumps({"samples": {"a/learned": samples}}), encoding="utf-8")
    base.write_text(json.dumps(pooled.to_json()), encoding="utf-8")
    assert calibrate_main([str(report), "--label", "a/learned", "--capture-groups", "fax;scan;photo", "--onto",
                           str(base), "--refit", "shared:scan", "--out", str(out)]) == 0
    cal = ScoreCalibrator.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert cal.shared(ev, "scan") == apart.shared(ev, "scan")
    assert cal.shared(ev, "photo") == pooled.shared(ev, "photo")


def test_empty_fields_with_nothing_or_something_left_get_their_own_absent_rates() -> None:
    """P(really absent) of an empty field is fitted apart for fields with nothing at all left for them (vacant P 0),
    for the other free fields (a candidate left below VACANT_FREE), and for the rest (a candidate above it, or a
    fax); each rate holds for its own kind."""
    def s(vacant, absent, capture="scan"):
        return {"field": "beneficiary_name", "found": False, "correct": absent, "truth_absent": absent,
                "score": None, "rules_agree": False, "rules_found": False, "vacant": vacant,
                "document_capture": capture}

    samples = [s(0.0, True) for _ in range(18)] + [s(0.0005, i % 4 != 0) for i in range(8)]
    samples += [s(0.02, i % 2 == 0) for i in range(8)] + [s(0.0, False, "fax") for _ in range(2)]
    cal = fit_calibration(samples, "t")
    assert cal.absent_given("beneficiary_name", 0.0, "scan") == 0.95  # 18 of 18, add-one smoothed
    assert cal.absent_given("beneficiary_name", 0.0005, "photo") == 0.7  # 6 of 8
    assert cal.absent_given("beneficiary_name", 0.02, "scan") == round(5 / 12, 6)  # 4 of 10 (with the fax's two)
    assert cal.absent_given("beneficiary_name", 0.0, "fax") == round(5 / 12, 6)
    assert ScoreCalibrator.from_json(cal.to_json()) == cal
    with pytest.raises(ValueError, match="refit"):  # rates fitted at another threshold are not applied
        ScoreCalibrator.from_json({**cal.to_json(), "vacant_free": 0.001})


def test_a_file_without_nothing_left_rates_keeps_the_free_rate_for_them() -> None:
    """A calibration fitted before the nothing-left rates existed fitted its free rate on those fields too."""
    cal = ScoreCalibrator(null_ok={"premium": 0.3}, null_ok_free={"premium": 0.9})
    assert cal.absent_given("premium", 0.0, "scan") == 0.9
    cal = replace(cal, null_ok_none_left={"premium": 0.97})
    assert cal.absent_given("premium", 0.0, "scan") == 0.97
    assert cal.absent_given("premium", 0.0005, "scan") == 0.9
    assert cal.absent_given("premium", 0.0, "fax") == 0.3


def test_values_read_with_an_unsure_character_get_their_own_map() -> None:
    """Values whose least sure character is below WEAK_READING are mapped by a map fitted on them alone: at the
    same P, a value the recognizer was unsure of gets the confidence such values earned."""
    def s(correct, rec_min):
        return {"field": "insured_name", "found": True, "correct": correct, "truth_absent": False, "score": 0.9995,
                "evidence": {"rec_min": rec_min}}

    samples = [s(True, 0.99) for _ in range(98)] + [s(True, 0.6) for _ in range(8)] + [s(False, 0.6) for _ in range(2)]
    cal = fit_calibration(samples, "t", capture_prior=0.0)
    assert cal.confidence(_Ev(0.9995, 0.99)) == round(99 / 100, 6)  # 98 of 98, add-one smoothed
    assert cal.confidence(_Ev(0.9995, 0.6)) == round(9 / 12, 6)  # 8 of 10
    assert cal.confidence(_Ev(0.9995, WEAK_READING)) == cal.confidence(_Ev(0.9995, 0.99))
    assert ScoreCalibrator.from_json(cal.to_json()) == cal
    with pytest.raises(ValueError, match="refit"):  # a map fitted below another threshold is not applied
        ScoreCalibrator.from_json({**cal.to_json(), "weak_reading": {**cal.to_json()["weak_reading"], "below": 0.8}})
    plain = fit_calibration([s(True, 0.99) for _ in range(10)], "t")
    assert not plain.weak_x and plain.confidence(_Ev(0.9995, 0.5)) == plain.confidence(_Ev(0.9995, 0.99))


def test_a_value_is_weak_by_the_characters_it_is_read_from() -> None:
    """Where the evidence records ``value_rec_min`` (an amount's or a date's numerals), that decides whether the
    value is fitted, and mapped, as weakly read; an unsure separator alone does not."""
    def s(correct, rec_min, value_rec_min):
        return {"field": "premium", "found": True, "correct": correct, "truth_absent": False, "score": 0.9995,
                "evidence": {"rec_min": rec_min, "value_rec_min": value_rec_min}}

    samples = [s(True, 0.5, 0.99) for _ in range(98)] + [s(i < 8, 0.5, 0.6) for i in range(10)]
    cal = fit_calibration(samples, "t", capture_prior=0.0)
    assert cal.iso_y == (round(99 / 100, 6),) and cal.weak_y == (round(9 / 12, 6),)
    separator = SimpleNamespace(score=0.9995, rec_min=0.5, reading=0.99)
    assert cal.confidence(separator) == cal.iso_y[0]


def test_lexicon_draws_of_one_folder_count_as_one_reading() -> None:
    """Fitting on the same documents in four lexicon draws, each weighted by draw_weight, gives the map of one
    draw: repeated readings of a document do not add evidence."""
    def s(correct):
        return {"field": "insurer", "found": True, "correct": correct, "truth_absent": False, "score": 0.9999,
                "rules_agree": False, "rules_found": True}

    one = [s(i % 20 != 0) for i in range(100)]
    labels = ["dev/learned", "dev/withheld 0.3:3/learned", "dev/withheld 0.5:4/learned", "dev/withheld 0.5:5/learned"]
    assert draw_weight(labels[1], labels) == 0.25 and draw_weight("other/learned", labels + ["other/learned"]) == 1.0
    four = [dict(x, weight=draw_weight(label, labels)) for label in labels for x in one]
    assert fit_calibration(four, "t").iso_y == fit_calibration(one, "t").iso_y


def test_absent_only_samples_join_the_absent_rates_and_leave_the_map() -> None:
    """Samples given as ``absent_only`` count for the absent rates (their empty fields) and not for the map of P."""
    value = {"field": "premium", "found": True, "correct": False, "truth_absent": False, "score": 0.99,
             "rules_agree": False, "rules_found": True, "evidence": {"rec_min": 0.99}}
    empty = {"field": "premium", "found": False, "correct": True, "truth_absent": True, "score": None,
             "rules_agree": False, "rules_found": False, "vacant": 0.0, "document_capture": "scan"}
    alone = fit_calibration([dict(empty)], "t")
    more = fit_calibration([dict(empty)], "t", [dict(empty) for _ in range(8)] + [value] * 5)
    assert alone.absent_given("premium", 0.0, "scan") == round(2 / 3, 6)
    assert more.absent_given("premium", 0.0, "scan") == round(10 / 11, 6)
    assert (more.iso_x, more.iso_y) == (alone.iso_x, alone.iso_y)


def test_platt_map_is_fitted_per_capture_and_replaces_the_isotonic_map() -> None:
    """With enough wrong and right values, P is mapped by one slope on logit(P) and an offset per capture: higher P
    gives higher confidence, a capture whose values err more at the same P gets a lower offset, and a capture with
    no values of its own keeps the scans' map. With too few errors the isotonic map holds."""
    def s(correct, score, capture):
        return {"field": "premium", "found": True, "correct": correct, "truth_absent": False, "score": score,
                "capture": capture, "evidence": {"rec_min": 0.99}}

    samples = [s(i % 10 != 0, 0.9, "scan") for i in range(200)] + [s(i % 100 != 0, 0.999, "scan") for i in range(400)]
    samples += [s(i % 4 != 0, 0.9, "fax") for i in range(200)] + [s(i % 20 != 0, 0.999, "fax") for i in range(200)]
    cal = fit_calibration(samples, "t", value_map="platt")
    assert len(cal.platt) == 2 and cal.platt[1] > 0
    assert cal.platt_capture["fax"] < -0.5 and cal.platt_capture["photo"] == 0.0
    scan_hi, scan_lo = cal.confidence(_Ev(0.999, 0.99), "scan"), cal.confidence(_Ev(0.9, 0.99), "scan")
    assert 0.95 < scan_hi < 1.0 and 0.8 < scan_lo < scan_hi
    assert cal.confidence(_Ev(0.999, 0.99), "fax") < scan_hi
    assert cal.confidence(_Ev(0.999, 0.99), "photo") == scan_hi
    assert ScoreCalibrator.from_json(cal.to_json()) == cal
    iso = fit_calibration(samples, "t", capture_prior=0.0)  # the isotonic map alone
    assert not iso.platt and iso.iso_y == cal.iso_y
    assert iso.confidence(_Ev(0.999, 0.99), "fax") == iso.confidence(_Ev(0.999, 0.99), "scan")
    few = fit_calibration([s(i % 50 != 0, 0.999, "scan") for i in range(400)], "t", value_map="platt",
                          capture_prior=0.0)  # 8 wrong: below MIN_PLATT
    assert not few.platt and few.confidence(_Ev(0.999, 0.99)) == float(few.iso_y[-1])


def test_onto_refits_only_the_platt_map_of_a_calibration_file(tmp_path) -> None:
    """``--map platt --onto FILE`` writes FILE's maps and absent rates unchanged with a Platt map fitted on the
    labels, and records the command of both fits."""
    samples = [{"doc": f"d{i}", "field": "premium", "found": True, "correct": i % 10 != 0, "truth_absent": False,
                "score": 0.9 if i % 2 else 0.999, "capture": "fax" if i % 3 == 0 else "scan",
                "evidence": {"rec_min": 0.99}} for i in range(400)]
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"samples": {"a/learned": samples}}), encoding="utf-8")
    base = tmp_path / "base.json"
    base.write_text(json.dumps(ScoreCalibrator((0.5, 1.0), (0.7, 0.9), {"premium": 0.3}, 0.5, "old").to_json(
        {"command": "first fit"})), encoding="utf-8")
    out = tmp_path / "out.json"
    assert calibrate_main([str(report), "--label", "a/learned", "--map", "platt", "--onto", str(base),
                           "--version", "new", "--out", str(out)]) == 0
    cal, old = ScoreCalibrator.from_json(json.loads(out.read_text(encoding="utf-8"))), json.loads(base.read_text())
    assert cal.platt and cal.version == "new"
    assert (cal.iso_x, cal.iso_y, dict(cal.null_ok)) == ((0.5, 1.0), (0.7, 0.9), {"premium": 0.3})
    assert json.loads(out.read_text(encoding="utf-8"))["onto"]["command"] == old["command"] == "first fit"


def test_onto_without_the_platt_map_is_refused(tmp_path) -> None:
    with pytest.raises(SystemExit):
        calibrate_main([str(tmp_path / "r.json"), "--label", "a/learned", "--onto", str(tmp_path / "base.json")])
    with pytest.raises(SystemExit):  # the Platt map is refitted only under --map platt
        calibrate_main([str(tmp_path / "r.json"), "--label", "a/learned", "--onto", str(tmp_path / "base.json"),
                        "--refit", "platt"])
    with pytest.raises(SystemExit):  # --refit names a part of an --onto file
        calibrate_main([str(tmp_path / "r.json"), "--label", "a/learned", "--refit", "own"])


def test_onto_refit_own_replaces_only_the_maps_of_values_the_rules_do_not_share(tmp_path) -> None:
    """``--onto FILE --refit own`` fits the maps of values the rules do not share (pooled, weak reading, each
    capture's) on the labels and keeps FILE's shared maps, Platt map and absent rates: a confidence of a value the
    rules share is FILE's, one of a value they do not share is the new fit's."""
    def s(i, agree, correct, score, capture="scan", rec_min=0.99):
        return {"doc": f"d{i}", "field": "premium", "found": True, "correct": correct, "truth_absent": False,
                "score": score, "capture": capture, "evidence": {"rec_min": rec_min}, "rules_agree": agree,
                "rules_found": True}
    own = [s(i, False, i % 50 != 0, 0.995, "fax" if i % 4 == 0 else "scan") for i in range(400)]
    own += [s(i, False, i % 3 != 0, 0.995, rec_min=0.5) for i in range(400, 460)]
    shared = [s(i, True, i % 5 != 0, 0.995, "fax" if i % 2 else "scan") for i in range(460, 660)]
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"samples": {"a/learned": own + shared}}), encoding="utf-8")
    old_shared = ((0.5, 1.0), (0.6, 0.7))
    base_cal = replace(fit_calibration(shared + own[:20], "old"), null_ok={"premium": 0.3},
                       shared_x=old_shared[0], shared_y=old_shared[1],
                       shared_by_capture={"scan": old_shared, "photo": old_shared, "fax": old_shared})
    base = tmp_path / "base.json"
    base.write_text(json.dumps(base_cal.to_json({"command": "first fit"})), encoding="utf-8")
    out = tmp_path / "out.json"
    assert calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "own",
                           "--version", "new", "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    cal, fresh = ScoreCalibrator.from_json(written), fit_calibration(own + shared, "fresh")
    assert cal.version == "new" and written["onto"]["command"] == "first fit"
    assert dict(cal.null_ok) == {"premium": 0.3} and cal.platt == base_cal.platt
    assert (cal.shared_x, cal.shared_y) == old_shared and dict(cal.shared_by_capture) == dict(
        base_cal.shared_by_capture)
    assert (cal.iso_x, cal.iso_y, cal.weak_x, cal.weak_y) == (fresh.iso_x, fresh.iso_y, fresh.weak_x, fresh.weak_y)
    assert dict(cal.own_by_capture) == dict(fresh.own_by_capture) != dict(base_cal.own_by_capture)
    ev = _Ev(0.995, 0.99)
    assert cal.shared(ev, "scan") == base_cal.shared(ev, "scan")
    assert cal.confidence(ev, "fax") == fresh.confidence(ev, "fax") != base_cal.confidence(ev, "fax")
    # shared:fax refits the faxes' map of shared values too; the scans' and photos' stay FILE's
    assert calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "own",
                           "--refit", "shared:fax", "--version", "new", "--out", str(out)]) == 0
    both = ScoreCalibrator.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert both.shared_by_capture["fax"] == fresh.shared_by_capture["fax"] != old_shared
    assert both.shared_by_capture["scan"] == both.shared_by_capture["photo"] == old_shared
    assert dict(both.own_by_capture) == dict(fresh.own_by_capture) and dict(both.null_ok) == {"premium": 0.3}
    report.write_text(json.dumps({"samples": {"a/learned": own}}), encoding="utf-8")
    with pytest.raises(SystemExit):  # no shared values among the labels: nothing to refit the faxes' map from
        calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "shared:fax",
                        "--out", str(out)])


def test_onto_refit_absent_none_left_replaces_only_the_rates_of_fields_with_nothing_left(tmp_path) -> None:
    """``--refit absent:none_left`` takes the absent rates of empty fields with nothing left for them from the new
    fit and keeps FILE's other rates (``null_ok`` also chooses which fields the assignment carries) and maps."""
    def empty(i, absent, vacant, capture="scan"):
        return {"doc": f"d{i}", "field": "issue_date", "found": False, "correct": absent, "truth_absent": absent,
                "score": None, "vacant": vacant, "document_capture": capture, "rules_agree": False,
                "rules_found": False}
    found = [{"doc": f"v{i}", "field": "premium", "found": True, "correct": True, "truth_absent": False,
              "score": 0.99, "capture": "scan", "evidence": {"rec_min": 0.99}, "rules_agree": False,
              "rules_found": True} for i in range(40)]
    none_left = [empty(i, True, 0.0) for i in range(30)]
    free = [empty(i, i % 2 == 0, 0.0005) for i in range(30, 40)]
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"samples": {"a/learned": found + none_left + free}}), encoding="utf-8")
    base_cal = replace(fit_calibration(found + [empty(i, i % 2 == 0, 0.0) for i in range(10)], "old"),
                       null_ok={"issue_date": 0.3})
    base = tmp_path / "base.json"
    base.write_text(json.dumps(base_cal.to_json({"command": "first fit"})), encoding="utf-8")
    out = tmp_path / "out.json"
    assert calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "absent:none_left",
                           "--version", "new", "--out", str(out)]) == 0
    cal = ScoreCalibrator.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert cal.null_ok_none_left["issue_date"] == pytest.approx(31 / 32) != base_cal.null_ok_none_left["issue_date"]
    assert dict(cal.null_ok) == {"issue_date": 0.3} and dict(cal.null_ok_free) == dict(base_cal.null_ok_free)
    assert (cal.iso_x, cal.iso_y) == (base_cal.iso_x, base_cal.iso_y)
    report.write_text(json.dumps({"samples": {"a/learned": found}}), encoding="utf-8")
    with pytest.raises(SystemExit):  # no empty field among the labels: nothing to refit the rates from
        calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "absent:none_left",
                        "--out", str(out)])


def test_onto_refit_absent_rest_keeps_the_carried_fields_rates_and_needs_free_at_a_new_threshold(tmp_path) -> None:
    """``--refit absent:rest`` takes the other empty fields' rates from the new fit but keeps those of the fields
    the assignment carries (under RARELY_ABSENT), and refuses a fit that would carry one more; a file whose free
    rates were fitted at another VACANT_FREE takes new free and rest rates together, or none."""
    def empty(i, field, absent, vacant):
        return {"doc": f"d{i}", "field": field, "found": False, "correct": absent, "truth_absent": absent,
                "score": None, "vacant": vacant, "document_capture": "scan", "rules_agree": False,
                "rules_found": False}
    found = [{"doc": f"v{i}", "field": "premium", "found": True, "correct": True, "truth_absent": False,
              "score": 0.99, "capture": "scan", "evidence": {"rec_min": 0.99}, "rules_agree": False,
              "rules_found": True} for i in range(40)]
    rest = [empty(i, "issue_date", i % 4 != 0, 0.5) for i in range(20)]  # 15 of 20 absent
    rest += [empty(i, "policy_number", i % 2 == 0, 0.5) for i in range(20, 30)]  # 5 of 10: above RARELY_ABSENT
    free = [empty(i, "issue_date", True, 0.0005) for i in range(30, 40)]
    report, base, out = tmp_path / "r.json", tmp_path / "base.json", tmp_path / "out.json"
    report.write_text(json.dumps({"samples": {"a/learned": found + rest + free}}), encoding="utf-8")
    base_cal = replace(fit_calibration(found + free, "old"), null_ok={"issue_date": 0.3, "policy_number": 0.1})
    base.write_text(json.dumps(base_cal.to_json()), encoding="utf-8")
    assert calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "absent:rest",
                           "--out", str(out)]) == 0
    cal = ScoreCalibrator.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert cal.null_ok["issue_date"] == pytest.approx(16 / 22)  # add-one smoothed
    assert cal.null_ok["policy_number"] == 0.1  # carried: kept
    assert dict(cal.null_ok_free) == dict(base_cal.null_ok_free)
    carried_more = [empty(i, "insurer", False, 0.5) for i in range(40, 50)]
    report.write_text(json.dumps({"samples": {"a/learned": found + rest + free + carried_more}}), encoding="utf-8")
    with pytest.raises(SystemExit):  # insurer's rate would fall under RARELY_ABSENT
        calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "absent:rest",
                        "--out", str(out)])
    report.write_text(json.dumps({"samples": {"a/learned": found + rest + free}}), encoding="utf-8")
    base.write_text(json.dumps({**base_cal.to_json(), "vacant_free": 0.001}), encoding="utf-8")
    with pytest.raises(SystemExit):  # fitted at another threshold: free and rest together
        calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "absent:rest",
                        "--out", str(out)])
    assert calibrate_main([str(report), "--label", "a/learned", "--onto", str(base), "--refit", "absent:rest",
                           "--refit", "absent:free", "--out", str(out)]) == 0
    assert ScoreCalibrator.from_json(json.loads(out.read_text(encoding="utf-8"))).null_ok_free["issue_date"] == \
        pytest.approx(11 / 12)


def test_absent_prior_smooths_free_rates_toward_the_kind_pooled_over_fields_not_carried() -> None:
    """``absent_prior``: a free (or nothing-left) empty field's rate is smoothed toward the share of its kind pooled
    over the fields the assignment does not carry, not toward one half; a carried field keeps add-one."""
    def empty(i, field, absent, vacant):
        return {"doc": f"d{i}", "field": field, "found": False, "correct": absent, "truth_absent": absent,
                "score": None, "vacant": vacant, "document_capture": "scan", "rules_agree": False,
                "rules_found": False}
    rest = [empty(i, "policy_number", False, 0.5) for i in range(10)]  # carried: rate 1 / 12
    free = [empty(i, "issue_date", True, 0.0005) for i in range(10, 14)]
    free += [empty(i, "premium", True, 0.0005) for i in range(14, 50)]
    free += [empty(i, "policy_number", True, 0.0005) for i in range(50, 52)]
    plain, pooled = (fit_calibration(rest + free, "t", absent_prior=p) for p in (0.0, 2.0))
    assert plain.null_ok_free["issue_date"] == round(5 / 6, 6)  # add-one: 4 of 4
    share = 41 / 42  # 40 of 40 over issue_date and premium, add-one
    assert pooled.null_ok_free["issue_date"] == round((4 + 2 * share) / 6, 6) > plain.null_ok_free["issue_date"]
    assert pooled.null_ok_free["policy_number"] == plain.null_ok_free["policy_number"] == 0.75


def test_a_missing_report_or_a_label_no_report_holds_is_refused_by_name(tmp_path, capsys) -> None:
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"samples": {"a/learned": []}}), encoding="utf-8")
    with pytest.raises(SystemExit):
        calibrate_main([str(tmp_path / "none.json"), "--label", "a/learned", "--out", str(tmp_path / "c.json")])
    assert "none.json" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        calibrate_main([str(report), "--label", "a/learned", "--absent-label", "b/learned",
                        "--out", str(tmp_path / "c.json")])
    err = capsys.readouterr().err
    assert "b/learned" in err and "a/learned" in err
    assert not (tmp_path / "c.json").exists()
