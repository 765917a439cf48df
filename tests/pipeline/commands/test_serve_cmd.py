"""``docpipe serve --model-dir``: an adapted folder whose manifest cannot be read stops the start with a message."""
from __future__ import annotations

import argparse
import json

from pipeline.commands import serve_cmd


def test_an_unreadable_adapted_folder_is_refused_before_the_service_starts(tmp_path, capsys) -> None:
    (tmp_path / "adapted.json").write_text(json.dumps({"format_version": 99}), encoding="utf-8")
    parser = argparse.ArgumentParser()
    serve_cmd.add_arguments(parser)
    assert serve_cmd.run(parser.parse_args(["--model-dir", str(tmp_path)])) == 2
    assert "format_version" in capsys.readouterr().err


def test_a_readable_adapted_folder_or_a_plain_export_passes_the_check(tmp_path) -> None:
    assert serve_cmd._adapted_folder_ok(tmp_path)  # no manifest: a plain ERNIE-Layout export
    (tmp_path / "adapted.json").write_text(json.dumps({"format_version": 1, "wordings": {}}), encoding="utf-8")
    assert serve_cmd._adapted_folder_ok(tmp_path)
