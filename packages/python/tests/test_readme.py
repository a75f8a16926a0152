"""The Python examples of packages/python/README.md and of the repository's README run as
written, and show sparsity paying off: about a tenth of the blocks stored, not all of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import bsrmm

pytest.importorskip("scipy.sparse", reason="scipy is not installed: the examples use it")

PACKAGE = Path(__file__).resolve().parents[1]
READMES = {"package": PACKAGE / "README.md", "repository": PACKAGE.parents[1] / "README.md"}


def first_python_example(readme: Path) -> str:
    if not readme.is_file():
        pytest.skip(f"{readme} is not here (an installed copy of the tests)")
    found = re.search(r"```python\n(.*?)```", readme.read_text(), re.S)
    assert found, f"no Python example in {readme}"
    return found.group(1)


@pytest.mark.parametrize("which", sorted(READMES))
def test_readme_example_runs_with_a_tenth_of_the_blocks_stored(which, capsys):
    scope: dict = {}
    exec(compile(first_python_example(READMES[which]), str(READMES[which]), "exec"), scope)
    a = scope["A"]
    assert isinstance(a, bsrmm.BsrMatrix)
    block_rows, block_cols = (n // b for n, b in zip(a.shape, a.blocksize))
    stored = a.nnzb / (block_rows * block_cols)
    assert 0.05 <= stored <= 0.15, f"{which} README's matrix stores {stored:.0%} of its blocks"
