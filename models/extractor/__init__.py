"""ERNIE-Layout field extractor: character tokens + boxes -> BIO labels over the policy fields.

Only the numpy modules (``labels``, ``vocab``, ``windows``, ``bio``) are safe to import from the runtime
environment. ``model``, ``train`` and ``export`` import PaddleNLP and belong to the training virtualenv
(``.venv-train``, see ``requirements-train.txt``).
"""
