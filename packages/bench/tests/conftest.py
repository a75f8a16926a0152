import sys
from pathlib import Path

# The suite runs from a checkout (python -m bsrmm_bench from packages/bench) or installed; tests
# use the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
