"""Lets these tests import the shared helpers (bsr_cases.py) of the folder above."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
