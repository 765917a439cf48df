"""ERNIE-Layout field extractor: character tokens + boxes -> BIO labels over the policy fields.

Runtime-safe (numpy only): ``labels``, ``vocab``, ``windows``, ``geometry``, ``bio``, ``data``, ``metrics``;
``evaluate`` runs the exported model through ``stages.extraction.ernie``. Training-only (import PaddleNLP,
run them in ``.venv-train``, see ``requirements-train.txt``): ``model``, ``export``, ``trainer``, ``train``
(the CLI), ``bench`` (latency of model variants).
"""
