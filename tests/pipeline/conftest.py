import pytest


@pytest.fixture(scope="module")
def engine(inline_engine):
    """The session's in-process Engine (tests/conftest.py). If it cannot start, these tests error."""
    return inline_engine
