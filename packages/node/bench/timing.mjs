// Timers, summarised as the Python runner summarises its own (median, p10, p90: `compare` judges
// noise from that spread). Node has no CUDA events: GPU runs are timed with performance.now()
// around batches of calls that end in synchronize(), long enough that the synchronisation and
// the call overhead are a small part of each sample.

/** On the host the checked run is the warm-up (a multiply there can take a second), as in Python. */
export const CPU_BUDGET = { warmup_runs: 0, min_runs: 3, max_runs: 10, seconds: 0.5 };
/** Samples are batches of calls lasting about batch_ms each. */
export const GPU_BUDGET = { warmup_runs: 5, min_runs: 10, max_runs: 100, seconds: 0.4, batch_ms: 1, max_batch: 1000 };

/** numpy.percentile's default (linear interpolation between closest ranks). */
export function percentile(sorted, p) {
  const x = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(x);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo);
}

/** The `time_ms` record of RESULTS.md (plus `batch`: calls per sample). */
export function summarize(samples, timer, batch = 1) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    median: percentile(sorted, 50),
    p10: percentile(sorted, 10),
    p90: percentile(sorted, 90),
    min: sorted[0],
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    runs: samples.length,
    timer,
    batch,
  };
}

/** Host: run(i) (operand set i % sets) timed one call at a time. */
export function timeHost(run, sets, budget = CPU_BUDGET) {
  for (let i = 0; i < budget.warmup_runs; i++) run(i % sets);
  const samples = [];
  let spent = 0;
  for (let i = 0; samples.length < budget.max_runs && (samples.length < budget.min_runs || spent < budget.seconds * 1e3); i++) {
    const t0 = performance.now();
    run(i % sets);
    const dt = performance.now() - t0;
    samples.push(dt);
    spent += dt;
  }
  return summarize(samples, "performance.now");
}

/**
 * GPU: run(i) only enqueues; sync() waits for the device. After warm-up, a probe of 3 calls
 * sizes the batches (about batch_ms each) and their number (about `seconds` in all).
 */
export function timeDevice(run, sync, sets, budget = GPU_BUDGET) {
  for (let i = 0; i < budget.warmup_runs; i++) run(i % sets);
  sync();
  const t0 = performance.now();
  for (let i = 0; i < 3; i++) run(i % sets);
  sync();
  const perCall = Math.max((performance.now() - t0) / 3, 1e-3);
  const batch = Math.min(budget.max_batch, Math.max(1, Math.ceil(budget.batch_ms / perCall)));
  const count = Math.min(budget.max_runs, Math.max(budget.min_runs, Math.round((budget.seconds * 1e3) / (batch * perCall))));
  const samples = [];
  let call = 0;
  for (let s = 0; s < count; s++) {
    const start = performance.now();
    for (let i = 0; i < batch; i++) run(call++ % sets);
    sync();
    samples.push((performance.now() - start) / batch);
  }
  return summarize(samples, "performance.now+synchronize", batch);
}
