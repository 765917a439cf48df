from pipeline.tools.scoring import FieldCounts, Scoreboard


def test_design_rules():
    c = FieldCounts()
    assert c.add("a", "a")  # hit
    assert not c.add("a", None)  # miss
    assert not c.add(None, "b")  # false positive
    assert not c.add("a", "b")  # wrong value: both
    assert c.add(None, None)
    assert (c.tp, c.fp, c.fn) == (1, 2, 2)
    assert abs(c.precision - 1 / 3) < 1e-9 and abs(c.recall - 1 / 3) < 1e-9


def test_scoreboard_document_accuracy_and_micro():
    sb = Scoreboard(["x", "y"])
    assert sb.add_document("d1", {"x": "1", "y": None}, {"x": "1", "y": None})
    assert not sb.add_document("d2", {"x": "1", "y": "2"}, {"x": "1", "y": "3"})
    assert sb.document_accuracy == 0.5
    m = sb.micro
    assert (m.tp, m.fp, m.fn) == (2, 1, 1)
    assert sb.errors == [("d2", "y", "2", "3")]
    d = sb.as_dict()
    assert d["fields"]["y"]["f1"] == 0.0 and d["documents"] == 2
