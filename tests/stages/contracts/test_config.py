from pathlib import Path

import pytest

from stages.contracts.config import ConfigError, DocpipeConfig, load_config

REPO = Path(__file__).resolve().parents[3]


def test_default_yaml_matches_code_defaults():
    assert load_config(REPO / "configs" / "default.yaml") == DocpipeConfig()


def test_none_gives_defaults():
    assert load_config(None) == DocpipeConfig()


def test_unknown_key_is_an_error(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("detection:\n  limit_side_len: 640\n  thresh_typo: 0.2\n")
    with pytest.raises(ConfigError, match="thresh_typo"):
        load_config(p)


def test_unknown_top_level_section(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("detector: {}\n")
    with pytest.raises(ConfigError, match="detector"):
        load_config(p)


def test_values_are_typed(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("detection:\n  limit_side_len: 640\nrecognition:\n  decoder: greedy\n")
    cfg = load_config(p)
    assert cfg.detection.limit_side_len == 640 and cfg.recognition.decoder == "greedy"
    p.write_text("recognition:\n  decoder: viterbi\n")
    with pytest.raises(ConfigError, match="decoder"):
        load_config(p)


def test_unknown_model_key_rejected_at_load(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("detection:\n  model: ppocrv9_det\n")
    with pytest.raises(ConfigError, match="unknown model"):
        load_config(p)
    p.write_text("detection:\n  model: ppocrv4_rec\n")
    with pytest.raises(ConfigError, match="not det"):
        load_config(p)


def test_internal_constants_and_measurement_knobs_are_not_config_keys(tmp_path):
    p = tmp_path / "c.yaml"
    for text in ("recognition:\n  width_buckets: [128]\n", "page:\n  tall_share: 0.5\n",
                 "extraction:\n  withhold_labels: 0.25\n", "normalize:\n  boundary: true\n"):
        p.write_text(text)
        with pytest.raises(ConfigError, match="Extra inputs"):
            load_config(p)


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")
    p = tmp_path / "bad.yaml"
    p.write_text("detection: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(p)


def test_config_is_frozen():
    cfg = DocpipeConfig()
    with pytest.raises(Exception):
        cfg.detection.thresh = 0.5  # type: ignore[misc]
