#!/usr/bin/env node
// node bench/run.mjs [--suite quick] [--device cpu|cuda:0] [--out DIR] [--filter REGEX]
//                    [--cases-dir DIR] [--l2-mib 50]
// Runs a suite of packages/bench/cases through this package's build (dist/), writes the result
// JSON (packages/bench/RESULTS.md) and prints where. Exit status 1 when bsrmm failed or was wrong.
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import * as bsrmm from "../dist/esm/index.js";
import { CASES_DIR } from "./cases.mjs";
import { DEFAULT_L2_BYTES, runSuite } from "./runner.mjs";

const { values } = parseArgs({
  options: {
    suite: { type: "string", default: "quick" },
    device: { type: "string", default: "cpu" },
    out: { type: "string", default: fileURLToPath(new URL("out/", import.meta.url)) },
    filter: { type: "string" },
    "cases-dir": { type: "string", default: CASES_DIR },
    "l2-mib": { type: "string", default: String(DEFAULT_L2_BYTES / 2 ** 20) },
  },
});
const device = values.device === "cuda" ? "cuda:0" : values.device;
if (device !== "cpu" && !/^cuda:\d+$/.test(device)) {
  console.error(`--device ${values.device}: expected cpu or cuda:<n>`);
  process.exit(2);
}
const l2Mib = Number(values["l2-mib"]);
if (!(l2Mib >= 0)) {
  console.error(`--l2-mib ${values["l2-mib"]}: expected a number of MiB`);
  process.exit(2);
}

const { doc, path } = runSuite(bsrmm, {
  suite: values.suite,
  device,
  outDir: values.out,
  filter: values.filter ?? null,
  casesDir: values["cases-dir"],
  l2Bytes: l2Mib * 2 ** 20,
});
for (const record of doc.cases) {
  const r = record.results[0];
  const time = r.status === "ok" ? `${r.time_ms.median.toPrecision(4)} ms  ${(r.tflops * (record.device === "cpu" ? 1e3 : 1)).toFixed(1)} ${record.device === "cpu" ? "GFLOP/s" : "TFLOP/s"}` : `${r.status}: ${r.reason}`;
  console.log(`${record.device}  ${record.id}  ${time}`);
}
for (const s of doc.skipped) console.log(`skipped ${s.cases.length} ${s.device} case(s): ${s.reason}`);
console.log(`result: ${path}`);
const bad = doc.cases.filter((record) => record.results.some((r) => r.role === "ours" && (r.status === "failed" || r.status === "wrong")));
if (bad.length > 0) {
  console.error(`${bad.length} case(s) where bsrmm failed or was wrong`);
  process.exit(1);
}
