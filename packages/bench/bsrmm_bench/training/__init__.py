"""The `training` suite (issue 25): what a training step of block-sparse weights costs. Each op
alone (forward, input gradient, weight gradient) against STK and dense torch; fwd + bwd of a
transformer MLP of BsrLinear against dense nn.Linear and the same MLP on STK; a small
end-to-end training run against the dense-masked reference. `run.run_suite` writes the usual
result JSON (RESULTS.md), so `table`, `report` and `compare` read it."""
