"""Contracts: config, result schema, stage types and the model registry -- the bottom layer, imported by stages and pipeline alike."""
