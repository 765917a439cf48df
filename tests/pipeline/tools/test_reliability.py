"""ECE, reliability table and routing curve of ``docpipe eval`` against hand computations."""
import pytest

from pipeline.tools.reliability import (
    RoutedDocument, expected_calibration_error, reliability_table, routing_curve, routing_point,
)


def test_ece_equals_a_hand_computation():
    conf = [0.05, 0.15, 0.95, 0.92, 0.55, 1.0]
    right = [False, True, True, False, True, True]
    # bins: 0 -> {0.05: wrong}, 1 -> {0.15: right}, 5 -> {0.55: right}, 9 -> {0.95 right, 0.92 wrong, 1.0 right}
    hand = (1 * abs(0 - 0.05) + 1 * abs(1 - 0.15) + 1 * abs(1 - 0.55) + 3 * abs(2 / 3 - (0.95 + 0.92 + 1.0) / 3)) / 6
    assert expected_calibration_error(conf, right) == pytest.approx(hand)
    assert expected_calibration_error([], []) is None
    # perfectly calibrated bins give 0
    assert expected_calibration_error([0.75] * 4, [True, True, True, False]) == pytest.approx(0.0)


def test_reliability_table_bins():
    rows = reliability_table([0.05, 0.95, 0.92, 1.0], [False, True, False, True])
    assert len(rows) == 10
    assert rows[0] == {"bin": [0.0, 0.1], "count": 1, "mean_confidence": 0.05, "accuracy": 0.0}
    assert rows[9]["count"] == 3 and rows[9]["accuracy"] == pytest.approx(0.6667, abs=1e-4)
    assert rows[5]["count"] == 0 and rows[5]["accuracy"] is None


def test_routing_curve():
    docs = [RoutedDocument(0.001, False, True), RoutedDocument(0.004, False, False), RoutedDocument(0.02, False, True),
            RoutedDocument(0.0, True, True)]
    p = routing_point(docs, 0.005)
    assert p["straight_through"] == 2 and p["wrong_straight_through"] == 1
    assert p["straight_through_rate"] == 0.5 and p["error_rate_straight_through"] == 0.5
    curve = routing_curve(docs, (0.0005, 0.002, 1.0))
    assert [c["straight_through"] for c in curve] == [0, 1, 3]
    assert curve[0]["error_rate_straight_through"] is None
