"""Bounded path parameters: an integer outside 0..2**31-1 is a 422 before it reaches SQLite (which cannot
bind integers past 64 bits), never a 500."""
from __future__ import annotations

from typing import Annotated

from fastapi import Path

INDEX_MAX = 2**31 - 1

Index = Annotated[int, Path(ge=0, le=INDEX_MAX, description=f"0-based, at most {INDEX_MAX}")]
JobId = Annotated[str, Path(min_length=1, max_length=64, description="the id POST /v1/jobs answered")]
