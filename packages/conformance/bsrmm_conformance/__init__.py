"""Cross-binding conformance: every case of a bench suite (and every bad input of bad_inputs.py)
through every binding's public API, each output checked against float64 and against the others.
README.md (one folder up) describes the flow and the vectors format."""
