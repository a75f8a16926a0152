// The Node benchmark runner: its generator reproduces packages/bench/cases/vectors.json
// bit for bit, its case ids are the Python runner's, its check catches a wrong or unwritten
// output, and a run writes a result JSON of the RESULTS.md schema (a tiny suite covering every
// path, and one case of the quick suite).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { CASES_DIR, loadSuite, makeCase, number } from "./cases.mjs";
import { build, check, reference, referenceRows, storage } from "./operands.mjs";
import { apportion, generate, powerLawWeights } from "./patterns.mjs";
import * as prng from "./prng.mjs";

const vectors = JSON.parse(readFileSync(join(CASES_DIR, "vectors.json"), "utf8"));
const RUN = fileURLToPath(new URL("run.mjs", import.meta.url));

test("the generator reproduces vectors.json: mix64, draws, values, rounding, integers, coins", () => {
  for (const t of vectors.mix64) assert.equal(prng.mix64(BigInt(t.in)), BigInt(t.out), `mix64(${t.in})`);
  for (const d of vectors.draws) {
    const s = prng.stream(d.seed, d.stream);
    assert.equal(s.key, BigInt(d.key), `key(${d.seed}, ${d.stream})`);
    d.counters.forEach((counter, i) => {
      const c = Number(counter);
      const where = `seed ${d.seed} stream ${d.stream} counter ${counter}`;
      assert.equal(prng.draw(s, c), BigInt(d.u64[i]), where);
      const unit = new Float64Array(1);
      prng.units(s, c, 1, unit);
      assert.equal(unit[0], d.unit[i], `unit, ${where}`);
      assert.equal(prng.float16Bits(unit[0]), d.float16_bits[i], `float16, ${where}`);
      assert.equal(prng.bfloat16Bits(unit[0]), d.bfloat16_bits[i], `bfloat16, ${where}`);
      assert.equal(prng.boundedAt(s, c, 7), d.bounded_7[i], `bounded 7, ${where}`);
      assert.equal(prng.boundedAt(s, c, 1000003), d.bounded_1000003[i], `bounded 1000003, ${where}`);
      assert.equal(prng.coinAt(s, c, 0.3), d["coin_0.3"][i], `coin 0.3, ${where}`);
    });
    // The sequential path (units over a range) agrees with the counter-based one.
    const run = new Float64Array(4);
    prng.units(s, 998, 4, run);
    const one = new Float64Array(1);
    prng.units(s, 1000, 1, one);
    assert.equal(run[2], one[0]);
  }
  for (const r of vectors.rounding) {
    assert.equal(prng.float16Bits(r.value), r.float16_bits, `float16(${r.value})`);
    assert.equal(prng.bfloat16Bits(r.value), r.bfloat16_bits, `bfloat16(${r.value})`);
  }
});

test("the pattern generators reproduce vectors.json", () => {
  const w = vectors.power_law_weights;
  assert.deepEqual(powerLawWeights(w.block_rows, w.alpha).map(String), w.weights);
  for (const a of vectors.apportion) assert.deepEqual(apportion(a.total, a.weights, a.cap), a.counts, JSON.stringify(a));
  for (const p of vectors.patterns) {
    const got = generate(p.pattern, p.block_rows, p.block_cols, p.seed, p.block);
    assert.deepEqual(Array.from(got.indptr), p.indptr, `${JSON.stringify(p.pattern)} indptr`);
    assert.deepEqual(Array.from(got.indices), p.indices, `${JSON.stringify(p.pattern)} indices`);
  }
});

const caseOf = (fields) =>
  makeCase({ f32_mode: "exact", layout_b: "row", layout_c: "row", transpose_a: false, seed: 1, devices: ["cpu", "cuda"], alpha: 1, beta: 0, bias: false, activation: "none", pad_b: 0, pad_c: 0, ...fields });

test("operands and case ids reproduce vectors.json; ids print numbers as Python does", () => {
  for (const o of vectors.operands) {
    const c = caseOf(o.case);
    assert.equal(c.id, o.id);
    const ops = build(c, 2);
    assert.deepEqual(Array.from(ops.pattern.indptr), o.indptr, `${o.id} indptr`);
    assert.deepEqual(Array.from(ops.pattern.indices), o.indices, `${o.id} indices`);
    assert.deepEqual(Array.from(ops.sets[0].a.values), o.a_values, `${o.id} A`);
    assert.deepEqual(Array.from(ops.sets[0].b.values), o.b_values, `${o.id} B`);
    assert.deepEqual(Array.from(ops.sets[1].b.values.subarray(0, o.b_set1_first.length)), o.b_set1_first, `${o.id} B of set 1`);
    // What bsrmm is given holds exactly those values.
    const { value } = storage(c.dtype);
    assert.deepEqual(Array.from(ops.sets[0].a.stored, value), o.a_values, `${o.id} stored A`);
  }
  assert.deepEqual([0.125, 1, 2.5, 0.0001, 0.00001, 1.5e-7, 3e16].map(number), ["0.125", "1", "2.5", "0.0001", "1e-05", "1.5e-07", "30000000000000000"]);
  const quick = loadSuite("quick");
  assert.equal(quick.length, 11);
  assert.equal(quick[0].id, "float32_4096x4096x256_b16x16_uniform-d0.05_rr_s1");
  assert.ok(quick.some((c) => c.id === "float16_8192x8192x64_b64x64_power_law-a1-d0.125_rr_s1"));
});

test("the check finds a wrong element, an unwritten one, and passes a right output", () => {
  for (const [dtype, transpose_a, layout_c] of [["float32", false, "row"], ["bfloat16", true, "col"]]) {
    const c = caseOf({ m: 24, k: 16, n: 5, block: [4, 8], dtype, transpose_a, layout_c, pattern: { kind: "uniform", density: 0.5 } });
    const ops = build(c, 1);
    const rows = referenceRows(ops);
    assert.equal(rows.length, 24);
    const ref = reference(ops, rows);
    const { array, bits } = storage(dtype);
    const at = layout_c === "row" ? (i, j) => i * c.n + j : (i, j) => j * c.m + i;
    const out = new array(c.m * c.n);
    for (let i = 0; i < c.m; i++) for (let j = 0; j < c.n; j++) out[at(i, j)] = bits(ref[i * c.n + j]);
    const right = check(ops, out, rows, ref);
    assert.equal(right.non_finite, 0);
    assert.ok(right.error <= (dtype === "float32" ? 1e-7 : 4e-3), `${dtype}: error ${right.error} of a rounded reference`);
    const wrong = out.slice();
    wrong[at(7, 3)] = bits(ref[7 * c.n + 3] + 1);
    assert.ok(check(ops, wrong, rows, ref).error > 1e-2, `${dtype}: one element off by 1 goes unseen`);
    const unwritten = out.slice();
    unwritten[at(23, 4)] = storage(dtype).nan;
    assert.deepEqual(check(ops, unwritten, rows, ref), { error: Infinity, non_finite: 1 });
  }
});

function runBench(args) {
  const out = mkdtempSync(join(tmpdir(), "bsrmm-node-bench-"));
  try {
    const stdout = execFileSync(process.execPath, [RUN, "--out", out, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const files = readdirSync(out).filter((f) => /^bench-.*-node-\d{8}-\d{6}\.json$/.test(f));
    assert.equal(files.length, 1, `one result file in ${readdirSync(out)}`);
    assert.match(stdout, /result: /);
    return JSON.parse(readFileSync(join(out, files[0]), "utf8"));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Every field RESULTS.md lists, with its type. */
function checkSchema(doc) {
  assert.equal(doc.schema, "bsrmm-bench/result");
  assert.equal(doc.schema_version, 1);
  assert.ok(typeof doc.started === "string" && typeof doc.finished === "string");
  assert.equal(doc.environment.runner, "node");
  assert.equal(typeof doc.environment.versions.bsrmm, "string");
  for (const record of doc.cases) {
    for (const key of ["id", "device", "seconds", "case", "operands", "reference", "results", "summary"]) assert.ok(key in record, `${record.id}: ${key}`);
    for (const key of ["nnzb", "density", "row_blocks_min", "row_blocks_max", "flops", "dense_flops", "bytes_per_set", "rotation_sets"]) assert.equal(typeof record.operands[key], "number", key);
    for (const r of record.results) {
      for (const key of ["impl", "label", "role", "status", "reason", "error", "non_finite", "time_ms", "tflops", "variant", "notes"]) assert.ok(key in r, `${record.id}: result ${key}`);
      assert.equal(r.impl, "bsrmm");
      if (r.status === "ok") {
        assert.ok(r.error <= record.reference.tolerance, `${record.id}: error ${r.error}`);
        assert.equal(r.non_finite, 0);
        for (const key of ["median", "p10", "p90", "min", "mean"]) assert.ok(Number.isFinite(r.time_ms[key]) && r.time_ms[key] > 0, `${record.id}: ${key}`);
        assert.ok(r.time_ms.p10 <= r.time_ms.median && r.time_ms.median <= r.time_ms.p90);
        assert.equal(record.summary.ours_ms, r.time_ms.median);
      }
    }
  }
}

test("a run of a small suite: every dtype, layouts, A^T, patterns, skips and unavailable cases", () => {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-node-cases-"));
  try {
    const suite = {
      suite: "tiny",
      defaults: { seed: 3, devices: ["cpu"], m: 64, k: 96, n: 24, pattern: { kind: "uniform", density: 0.5 } },
      cases: [
        { block: 16, vary: [["dtype", ["float32", "float64", "float16", "bfloat16"]]] },
        { block: [8, 16], dtype: "float32", transpose_a: true, layout_b: "col", layout_c: "col", pattern: { kind: "power_law", alpha: 1.5, density: 0.3 } },
        { block: 8, dtype: "float16", layout_c: "col", pattern: { kind: "topk", density: 0.25 } },
        { block: 16, dtype: "float32", f32_mode: "tf32" },
        { block: 16, dtype: "float32", alpha: 2, note: "conformance only" },
        { block: 16, dtype: "float16", devices: ["cuda"] },
      ],
    };
    writeFileSync(join(dir, "tiny.json"), JSON.stringify(suite));
    const doc = runBench(["--suite", "tiny", "--device", "cpu", "--cases-dir", dir]);
    checkSchema(doc);
    assert.deepEqual(doc.devices, ["cpu"]);
    assert.equal(doc.cases.length, 7);
    assert.deepEqual(
      doc.cases.map((r) => r.results[0].status),
      ["ok", "ok", "ok", "ok", "ok", "ok", "unavailable"],
    );
    assert.match(doc.cases[6].results[0].reason, /f32_mode/);
    assert.equal(doc.skipped.length, 1);
    assert.match(doc.skipped[0].reason, /conformance-only/);
    assert.deepEqual(doc.skipped[0].cases, ["float32_64x96x24_b16x16_uniform-d0.5_rr_s3_alpha2"]);
    assert.equal(doc.cases[4].id, "float32_64x96x24_b8x16_power_law-a1.5-d0.3_cc_tA_s3");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("one quick-suite case on the CPU, as `pnpm run bench` runs them", () => {
  const doc = runBench(["--suite", "quick", "--device", "cpu", "--filter", "b64x64_uniform-d0.05"]);
  checkSchema(doc);
  assert.equal(doc.cases.length, 1);
  assert.equal(doc.cases[0].results[0].status, "ok");
  assert.equal(doc.cases[0].reference.rows_checked, 4096);
});
