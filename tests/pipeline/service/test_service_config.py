"""The ``service:`` config section: typed, unknown keys rejected, every key listed in configs/default.yaml."""
from pathlib import Path

import pytest
import yaml

from stages.contracts.config import ConfigError, ServiceConfig, load_config

REPO = Path(__file__).resolve().parents[3]


def test_default_yaml_lists_every_service_key_with_its_default():
    raw = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))["service"]
    assert set(raw) == set(ServiceConfig.model_fields)
    assert ServiceConfig.model_validate(raw) == ServiceConfig()


def test_unknown_service_key_is_an_error(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("service:\n  port: 9000\n  tokn: abc\n")
    with pytest.raises(ConfigError, match="tokn"):
        load_config(p)
    p.write_text("service:\n  port: 9000\n  retention_hours: 1.5\n")
    cfg = load_config(p)
    assert cfg.service.port == 9000 and cfg.service.retention_hours == 1.5
    p.write_text("service:\n  retention_hours: 0\n")
    with pytest.raises(ConfigError, match="retention_hours"):
        load_config(p)
