"""Contexts tune by default (tuning="auto", as in the core): every test's choices go to a cache
file of this pytest session, never to the user's. The core reads BSRMM_TUNING_CACHE on every
call, and child interpreters inherit it unless a test gives them their own."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def private_tuning_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("tuning") / "tuning.json"
    saved = os.environ.get("BSRMM_TUNING_CACHE")
    os.environ["BSRMM_TUNING_CACHE"] = str(path)
    yield path
    if saved is None:
        del os.environ["BSRMM_TUNING_CACHE"]
    else:
        os.environ["BSRMM_TUNING_CACHE"] = saved
