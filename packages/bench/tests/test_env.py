"""The environment record: which source a result was measured on."""

import re

from bsrmm_bench import env


def test_git_commit_names_head_and_says_when_the_tree_differs(monkeypatch):
    monkeypatch.delenv("BSRMM_SOURCE_COMMIT", raising=False)
    commit = env.git_commit()
    if commit is None:  # not a git checkout (an unpacked sdist)
        return
    assert re.fullmatch(r"[0-9a-f]{40}(\+modified)?", commit), commit


def test_git_commit_takes_the_runners_word(monkeypatch):
    monkeypatch.setenv("BSRMM_SOURCE_COMMIT", "0123abc")
    assert env.git_commit() == "0123abc"
