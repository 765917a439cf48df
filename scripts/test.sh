#!/usr/bin/env bash
# The project's test command (README): runtime tests in this Python, training tests in .venv-train.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pytest -q "$@"
if [ -x .venv-train/bin/python ]; then
  .venv-train/bin/python -m pytest -q tests/models/test_extractor_train.py
fi
