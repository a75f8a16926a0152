// Runs a suite through the Node binding: for every case, builds the operands, computes the
// float64 reference, checks one run of bsrmm on a NaN-poisoned output, then times it. Writes the
// result JSON of packages/bench/RESULTS.md (bsrmm only: the peers are the Python runner's),
// rewritten after each case so a run cut short keeps its finished cases.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { CASES_DIR, TOLERANCE, isPlainProduct, loadSuite, precision, select, storedShape } from "./cases.mjs";
import { capture, gpuInfo } from "./environment.mjs";
import { build, bytesPerSet, check, patternOf, reference, referenceRows, rotationSets, storage, summary } from "./operands.mjs";
import { CPU_BUDGET, GPU_BUDGET, timeDevice, timeHost } from "./timing.mjs";

export const SCHEMA = "bsrmm-bench/result";
export const SCHEMA_VERSION = 1;
/** H100's L2 (the Python runner asks torch; Node cannot): sizes the GPU rotation sets. */
export const DEFAULT_L2_BYTES = 50 * 2 ** 20;

/**
 * Runs `suite` on `device` ("cpu" or "cuda:<n>") and returns { doc, path }. `bsrmm` is the
 * package's module (dist/esm/index.js), passed in so that tests and the CLI load one copy.
 */
export function runSuite(bsrmm, { suite, device, outDir, filter = null, casesDir = CASES_DIR, l2Bytes = DEFAULT_L2_BYTES, log = console.error }) {
  const kind = device === "cpu" ? "cpu" : "cuda";
  let selected = select(loadSuite(suite, casesDir), filter);
  const started = new Date();
  const doc = {
    schema: SCHEMA,
    schema_version: SCHEMA_VERSION,
    suite,
    filter,
    devices: [kind],
    started: started.toISOString().replace(/\.\d+Z$/, "+00:00"),
    finished: null,
    settings: { tuning: "auto", runner: "node", device, cpu_budget: CPU_BUDGET, gpu_budget: GPU_BUDGET, tolerance: TOLERANCE, l2_bytes: l2Bytes },
    environment: null,
    skipped: [],
    cases: [],
  };
  const cudaMissing = kind === "cuda" ? whyNoCuda(bsrmm) : null;
  doc.environment = capture(bsrmm, kind === "cuda" && cudaMissing === null);
  mkdirSync(outDir, { recursive: true });
  const stamp = started.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const path = join(outDir, `bench-${suite}-node-${stamp}.json`);

  const conformanceOnly = selected.filter((c) => !isPlainProduct(c));
  if (conformanceOnly.length > 0) {
    doc.skipped.push({
      device: kind,
      cases: conformanceOnly.map((c) => c.id),
      reason: "conformance-only case (alpha, beta, bias, activation or padded ld): the benchmark times C = op(A) B",
    });
    selected = selected.filter(isPlainProduct);
  }
  const onDevice = selected.filter((c) => c.devices.includes(kind));
  let plan = onDevice;
  if (cudaMissing !== null && onDevice.length > 0) {
    doc.skipped.push({ device: kind, cases: onDevice.map((c) => c.id), reason: cudaMissing });
    log(`skipping ${onDevice.length} ${kind} case(s): ${cudaMissing}`);
    plan = [];
  }
  if (plan.length === 0) log(`suite "${suite}": no case to run (filter ${JSON.stringify(filter)}, device ${device})`);

  const bCache = new Map();
  const collect = garbageCollector();
  plan.forEach((c, position) => {
    log(`[${position + 1}/${plan.length}] ${kind} ${c.id}`);
    const t0 = performance.now();
    const record = runCase(bsrmm, c, device, { bCache, l2Bytes });
    record.seconds = Math.round(performance.now() - t0) / 1e3;
    doc.cases.push(record);
    log(`    ${progressLine(record)}`);
    write(doc, path);
    collect();
  });
  if (kind === "cuda" && cudaMissing === null) doc.environment.gpu_after = gpuInfo().nvidia_smi ?? null;
  doc.finished = new Date().toISOString().replace(/\.\d+Z$/, "+00:00");
  write(doc, path);
  return { doc, path };
}

/**
 * A full garbage collection: a case's matrices and tensors (device memory the JS heap does not
 * count, so nothing else makes V8 collect them) are freed before the next case allocates.
 */
function garbageCollector() {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc");
}

function whyNoCuda(bsrmm) {
  if (!bsrmm.cudaCompiled()) return "the bsrmm addon was built without CUDA";
  if (bsrmm.cudaDeviceCount() === 0) return "bsrmm sees no CUDA device (cudaDeviceCount() = 0)";
  return null;
}

export function runCase(bsrmm, c, device, { bCache, l2Bytes = DEFAULT_L2_BYTES } = {}) {
  const kind = device === "cpu" ? "cpu" : "cuda";
  const pattern = patternOf(c);
  const sets = kind === "cuda" ? rotationSets(bytesPerSet(c, pattern), l2Bytes) : 1;
  const ops = build(c, sets, bCache, pattern);
  const rows = referenceRows(ops);
  const record = {
    id: c.id,
    device: kind,
    case: caseJson(c),
    operands: summary(ops),
    reference: {
      rows_checked: rows.length,
      rows_total: c.m,
      method:
        "float64 op(A) @ B on the host (sparse, in JS)" +
        (rows.length === c.m ? "" : "; rows sampled: whole block rows incl. first, last, longest, shortest, then evenly spaced") +
        "; every output element also checked for NaN/Inf (outputs are NaN-poisoned before the checked run)",
      tolerance: TOLERANCE[precision(c)],
    },
    results: [measure(bsrmm, ops, device, rows)],
  };
  record.summary = summarize(record);
  return record;
}

function caseJson(c) {
  const { id, m, k, n, block, dtype, f32_mode, layout_b, layout_c, transpose_a, pattern, seed, devices, note, alpha, beta, bias, activation, pad_b, pad_c } = c;
  return { id, m, k, n, block, dtype, f32_mode, layout_b, layout_c, transpose_a, pattern, seed, devices, note, alpha, beta, bias, activation, pad_b, pad_c };
}

const LAYOUT = { row: "row-major", col: "col-major" };

/** Prepare (untimed), one checked run on a NaN-poisoned output, then timing if it was right. */
export function measure(bsrmm, ops, device, rows) {
  const { BsrMatrix, Tensor, matmulSync, synchronize } = bsrmm;
  const c = ops.case;
  const tolerance = TOLERANCE[precision(c)];
  if (precision(c) === "tf32") return result("unavailable", { reason: "the Node binding has no f32_mode option (tf32 runs only through Python, Rust and C)" });
  const { name: dtype, array, nan } = storage(c.dtype);
  const [rowsA, colsA] = storedShape(c);
  const notes = [`tuning=auto (the Node binding's default)`, `B and C are tensors on ${device}: the timed calls move nothing between host and device`];
  let prepared;
  try {
    prepared = ops.sets.map(({ a, b }) => ({
      a: BsrMatrix.fromBsr({ rows: rowsA, cols: colsA, blockSize: c.block, rowPtr: ops.pattern.indptr, colIdx: ops.pattern.indices, values: a.stored, dtype, device }),
      b: Tensor.from(b.stored, { rows: c.k, cols: c.n, layout: LAYOUT[c.layout_b], dtype, device }),
      out: Tensor.from(new array(c.m * c.n).fill(nan), { rows: c.m, cols: c.n, layout: LAYOUT[c.layout_c], dtype, device }),
    }));
  } catch (error) {
    return result("failed", { reason: `prepare: ${describe(error)}`, notes });
  }
  const run = (i) => matmulSync(prepared[i].a, prepared[i].b, { out: prepared[i].out, transpose: c.transpose_a });
  let base;
  try {
    run(0);
    synchronize(device);
    const checked = check(ops, prepared[0].out.toArray(), rows, reference(ops, rows));
    base = { error: Number.isFinite(checked.error) ? checked.error : null, non_finite: checked.non_finite, notes };
    if (checked.non_finite > 0) return result("wrong", { reason: `${checked.non_finite} output element(s) NaN/Inf (unwritten or not finite)`, ...base });
    if (!(checked.error <= tolerance)) return result("wrong", { reason: `relative error ${checked.error.toPrecision(3)} > tolerance ${tolerance}`, ...base });
  } catch (error) {
    return result("failed", { reason: `run: ${describe(error)}`, notes });
  }
  try {
    const stats = device === "cpu" ? timeHost(run, prepared.length) : timeDevice(run, () => synchronize(device), prepared.length);
    return result("ok", { time_ms: stats, tflops: summary(ops).flops / (stats.median * 1e-3) / 1e12, ...base });
  } catch (error) {
    return result("failed", { reason: `timing: ${describe(error)}`, ...base });
  }
}

function describe(error) {
  return error instanceof Error ? `${error.name}${error.code ? ` ${error.code}` : ""}: ${error.message}` : String(error);
}

function result(status, fields) {
  return {
    impl: "bsrmm",
    label: "bsrmm (Node)",
    role: "ours",
    status,
    reason: null,
    error: null,
    non_finite: null,
    time_ms: null,
    tflops: null,
    variant: null,
    notes: [],
    ...fields,
  };
}

/** RESULTS.md's summary: with bsrmm alone there is no peer to compare with. */
function summarize(record) {
  const ours = record.results.find((r) => r.role === "ours" && r.status === "ok");
  return {
    best_peer: null,
    best_peer_ms: null,
    dense_peer: null,
    dense_ms: null,
    ours_ms: ours ? ours.time_ms.median : null,
    speedup_vs_best_peer: null,
    speedup_vs_dense: null,
  };
}

export function progressLine(record) {
  const parts = record.results.map((r) => (r.status === "ok" ? `${r.impl} ${r.time_ms.median.toPrecision(3)} ms (error ${r.error.toPrecision(2)})` : `${r.impl} ${r.status}: ${r.reason}`));
  return `${parts.join(" | ")}  (${record.seconds ?? 0} s)`;
}

function write(doc, path) {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(doc, null, 1)}\n`);
  renameSync(tmp, path);
}
