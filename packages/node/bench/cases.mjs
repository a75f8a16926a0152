// Loads the suites of packages/bench/cases/*.json, expands their `vary` lists, validates every
// case and derives its id, by the rules of packages/bench/cases/README.md (the Python runner's
// bsrmm_bench/cases.py implements the same rules: a case has the same id in both runners).
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PATTERN_KINDS } from "./patterns.mjs";

export const CASES_DIR = fileURLToPath(new URL("../../bench/cases/", import.meta.url));
export const DTYPES = ["float32", "float16", "bfloat16", "float64"];
const DEVICES = ["cpu", "cuda"];
const ACTIVATIONS = ["none", "relu", "gelu", "silu"];

/** Relative Frobenius error allowed against the float64 reference (cases/README.md). */
export const TOLERANCE = { float16: 1e-3, bfloat16: 1e-2, float32: 1e-5, tf32: 1e-3, float64: 1e-12 };

const DEFAULTS = {
  f32_mode: "exact",
  layout_b: "row",
  layout_c: "row",
  transpose_a: false,
  seed: 1,
  devices: ["cpu", "cuda"],
  alpha: 1,
  beta: 0,
  bias: false,
  activation: "none",
  pad_b: 0,
  pad_c: 0,
};
const FIELDS = new Set(["m", "k", "n", "block", "dtype", "pattern", "note", ...Object.keys(DEFAULTS)]);

export function availableSuites(dir = CASES_DIR) {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json") && f !== "vectors.json")
    .map((f) => f.slice(0, -5))
    .sort();
}

/** The suite's cases in file order (included suites first), each id once. */
export function loadSuite(name, dir = CASES_DIR) {
  const seen = new Map();
  for (const c of load(name, dir, [])) if (!seen.has(c.id)) seen.set(c.id, c);
  return [...seen.values()];
}

/** Cases whose id matches the regular expression `pattern` (search, not full match). */
export function select(cases, pattern) {
  if (!pattern) return cases;
  const rx = new RegExp(pattern);
  return cases.filter((c) => rx.test(c.id));
}

function load(name, dir, stack) {
  if (stack.includes(name)) throw new Error(`suite "${name}" includes itself through ${stack.join(" -> ")}`);
  const path = join(dir, `${name}.json`);
  if (!existsSync(path)) throw new Error(`no suite "${name}" (no ${path}); known suites: ${availableSuites(dir).join(", ")}`);
  const doc = JSON.parse(readFileSync(path, "utf8"));
  const cases = [];
  for (const included of doc.include ?? []) cases.push(...load(included, dir, [...stack, name]));
  const defaults = { ...structuredClone(DEFAULTS), ...(doc.defaults ?? {}) };
  (doc.cases ?? []).forEach((entry, position) => {
    const where = `${name}.json: cases[${position}]`;
    for (const fields of expandEntry(entry, where)) cases.push(makeCase(merge(defaults, fields), where));
  });
  return cases;
}

/** The cartesian product of entry.vary ([[path, [values...]], ...], the first path outermost). */
export function expandEntry(entry, where = "entry") {
  const { vary = [], ...base } = entry;
  const ok = Array.isArray(vary) && vary.every((v) => Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && Array.isArray(v[1]));
  if (!ok) throw new Error(`${where}: vary must be a list of [field path, [values...]] pairs`);
  let out = [structuredClone(base)];
  for (const [path, values] of vary) {
    out = out.flatMap((fields) =>
      values.map((value) => {
        const copy = structuredClone(fields);
        setPath(copy, path, structuredClone(value));
        return copy;
      }),
    );
  }
  return out;
}

function merge(defaults, fields) {
  const merged = structuredClone(defaults);
  for (const [key, value] of Object.entries(fields)) {
    if (key === "pattern" && isObject(value) && isObject(merged.pattern)) merged.pattern = { ...merged.pattern, ...structuredClone(value) };
    else merged[key] = structuredClone(value);
  }
  return merged;
}

function setPath(fields, path, value) {
  const parts = path.split(".");
  const leaf = parts.pop();
  let node = fields;
  for (const name of parts) {
    if (!isObject(node[name])) node[name] = {};
    node = node[name];
  }
  node[leaf] = value;
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** Validates one merged case and derives its id. */
export function makeCase(fields, where = "case") {
  const require = (ok, rule) => {
    if (!ok) throw new Error(`${where}: ${rule}`);
  };
  const unknown = Object.keys(fields).filter((key) => !FIELDS.has(key));
  require(unknown.length === 0, `unknown field(s) ${JSON.stringify(unknown.sort())}`);
  for (const name of ["m", "k", "n"]) require(Number.isInteger(fields[name]) && fields[name] >= 1, `${name} must be a positive integer`);
  const block = Number.isInteger(fields.block) ? [fields.block, fields.block] : fields.block;
  require(Array.isArray(block) && block.length === 2 && block.every((b) => Number.isInteger(b) && b >= 1), "block must be a positive integer or [height, width]");
  require(DTYPES.includes(fields.dtype), `dtype must be one of ${DTYPES.join(", ")}, got ${JSON.stringify(fields.dtype)}`);
  require(["exact", "tf32"].includes(fields.f32_mode), "f32_mode must be 'exact' or 'tf32'");
  require(fields.f32_mode === "exact" || fields.dtype === "float32", "f32_mode 'tf32' applies to float32 only");
  for (const name of ["layout_b", "layout_c"]) require(["row", "col"].includes(fields[name]), `${name} must be 'row' or 'col'`);
  require(typeof fields.transpose_a === "boolean", "transpose_a must be true or false");
  require(Number.isSafeInteger(fields.seed) && fields.seed >= 0, "seed must be a non-negative integer (below 2^53 in this runner)");
  require(Array.isArray(fields.devices) && fields.devices.length > 0 && fields.devices.every((d) => DEVICES.includes(d)), `devices must be a non-empty list of ${DEVICES.join(", ")}`);
  require(isObject(fields.pattern) && PATTERN_KINDS.includes(fields.pattern.kind), `pattern.kind must be one of ${PATTERN_KINDS.join(", ")}`);
  for (const name of ["alpha", "beta"]) require(typeof fields[name] === "number" && Number.isFinite(fields[name]), `${name} must be a finite number`);
  require(typeof fields.bias === "boolean", "bias must be true or false");
  require(ACTIVATIONS.includes(fields.activation), `activation must be one of ${ACTIVATIONS.join(", ")}`);
  for (const name of ["pad_b", "pad_c"]) require(Number.isInteger(fields[name]) && fields[name] >= 0, `${name} must be a non-negative integer`);
  const { m, k, n } = fields;
  const [rows, cols] = fields.transpose_a ? [k, m] : [m, k];
  require(rows % block[0] === 0 && cols % block[1] === 0, `stored A (${rows} x ${cols}) must be divisible by the block ${block[0]} x ${block[1]}`);
  const c = {
    id: "",
    m,
    k,
    n,
    block,
    dtype: fields.dtype,
    f32_mode: fields.f32_mode,
    layout_b: fields.layout_b,
    layout_c: fields.layout_c,
    transpose_a: fields.transpose_a,
    pattern: fields.pattern,
    seed: fields.seed,
    devices: fields.devices,
    note: String(fields.note ?? ""),
    alpha: fields.alpha,
    beta: fields.beta,
    bias: fields.bias,
    activation: fields.activation,
    pad_b: fields.pad_b,
    pad_c: fields.pad_c,
  };
  c.id = caseId(c);
  return c;
}

/** Shape of A as stored: op(A) is m x k, so A itself is k x m when transposed. */
export const storedShape = (c) => (c.transpose_a ? [c.k, c.m] : [c.m, c.k]);
export const precision = (c) => (c.dtype === "float32" && c.f32_mode === "tf32" ? "tf32" : c.dtype);
/** C = op(A) B with packed operands: what the benchmark times. */
export const isPlainProduct = (c) => c.alpha === 1 && c.beta === 0 && !c.bias && c.activation === "none" && c.pad_b === 0 && c.pad_c === 0;

const ID_PARAMS = {
  uniform: ["density"],
  bernoulli: ["density"],
  power_law: ["alpha", "density"],
  banded: ["lower", "upper"],
  causal: ["window"],
  block_diagonal: ["groups"],
  topk: ["density"],
};
const ID_LETTER = { density: "d", alpha: "a", lower: "l", upper: "u", window: "w", groups: "g" };

/** e.g. "float16_8192x8192x4096_b64x64_uniform-d0.125_rr_s1" (cases/README.md, "Case ids"). */
export function caseId(c) {
  const parts = [c.pattern.kind];
  for (const name of ID_PARAMS[c.pattern.kind]) if (name in c.pattern) parts.push(ID_LETTER[name] + number(c.pattern[name]));
  const pieces = [c.dtype + (precision(c) === "tf32" ? "-tf32" : ""), `${c.m}x${c.k}x${c.n}`, `b${c.block[0]}x${c.block[1]}`, parts.join("-"), c.layout_b[0] + c.layout_c[0]];
  if (c.transpose_a) pieces.push("tA");
  pieces.push(`s${c.seed}`);
  if (c.alpha !== 1) pieces.push(`alpha${number(c.alpha)}`);
  if (c.beta !== 0) pieces.push(`beta${number(c.beta)}`);
  if (c.bias) pieces.push("bias");
  if (c.activation !== "none") pieces.push(c.activation);
  if (c.pad_b) pieces.push(`pb${c.pad_b}`);
  if (c.pad_c) pieces.push(`pc${c.pad_c}`);
  return pieces.join("_");
}

/**
 * The shortest decimal that reads back to the same binary64, as Python's repr() writes it (the
 * ids were first made by the Python runner): integers without a fraction, exponent notation
 * below 1e-4 and from 1e16 on ("1e-05", "1e+16"), where JavaScript's String() differs.
 */
export function number(x) {
  if (Number.isInteger(x)) return BigInt(x).toString();
  const [digits, exp] = x.toExponential().split("e");
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${digits}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  return String(x);
}
