// The Node binding's conformance runner: every case of a vectors folder through the `bsrmm` npm
// package's public API (BsrMatrix.fromBsr, the Promise-returning matmul and, for op=sddmm, sddmm),
// as a user calls it.
//
//   node runner.mjs VECTORS OUT DEVICE        DEVICE: cpu | cuda:N
//
// Writes OUT/results.txt ("<id> ok", "<id> error <CODE> <message>" or "<id> skip <reason>") and
// OUT/<id>.bin, the whole C buffer after each successful multiply. The Node API takes packed
// TypedArrays and returns a new packed C: an operand with a padded leading dimension is packed
// here first, and the result is placed back into the case's C buffer (the padding untouched).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BsrMatrix, BsrmmError, matmul, sddmm } from "bsrmm";

const DTYPE = { float32: "f32", float64: "f64", float16: "f16", bfloat16: "bf16", float8_e4m3: "float8_e4m3", float8_e5m2: "float8_e5m2" };
const ARRAY = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, bfloat16: Uint16Array, float8_e4m3: Uint8Array, float8_e5m2: Uint8Array,
};
const INTEGER_FIELDS = new Set([
  "rows", "cols", "bh", "bw", "sort", "b_rows", "b_cols", "b_ld", "c_rows", "c_cols", "c_ld", "bias", "c_aliases_b", "y_rows", "y_cols", "y_ld",
]);

class Skip extends Error {}
const NO_LD = "the Node API takes packed arrays: it has no leading dimension to pass";

function readManifest(folder) {
  const [format, ...lines] = readFileSync(join(folder, "manifest.txt"), "utf8").split("\n");
  if (format !== "bsrmm-conformance 3") throw new Error(`${folder}/manifest.txt: not a bsrmm-conformance 3 manifest`);
  return lines.filter((line) => line.trim() !== "").map((line) => {
    const [head, ...tokens] = line.trim().split(/\s+/);
    if (head !== "case") throw new Error(`manifest line must start with 'case': ${line}`);
    const c = {};
    for (const token of tokens) {
      const eq = token.indexOf("=");
      const [key, value] = [token.slice(0, eq), token.slice(eq + 1)];
      c[key] = INTEGER_FIELDS.has(key) ? Number.parseInt(value, 10) : key === "alpha" || key === "beta" ? Number(value) : value;
    }
    return c;
  });
}

function load(folder, c, name, Type) {
  const bytes = readFileSync(join(folder, c.id, `${name}.bin`));
  return new Type(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

function offset(i, j, ld, layout) {
  return layout === "row" ? i * ld + j : j * ld + i;
}

/** The rows x cols operand of `buffer` as a packed array in its layout (the buffer itself when already packed). */
function packed(buffer, rows, cols, ld, layout) {
  const minor = layout === "row" ? cols : rows;
  if (ld < minor) throw new Skip(NO_LD);
  if (ld === minor && buffer.length === rows * cols) return buffer;
  const out = new buffer.constructor(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[offset(i, j, minor, layout)] = buffer[offset(i, j, ld, layout)];
  return out;
}

const layoutName = (layout) => (layout === "row" ? "row-major" : "col-major");

/** Writes the rows x cols result (packed, in `layout`) into the case's C buffer and saves it. */
function save(folder, c, out, result) {
  const cBuffer = load(folder, c, "c", ARRAY[c.c_dtype]);
  const cMinor = c.c_layout === "row" ? c.c_cols : c.c_rows;
  // f16 comes back as a Float16Array where the runtime has one: its bits are what the file holds.
  const values = result instanceof Float32Array || result instanceof Float64Array ? result : new Uint16Array(result.buffer, result.byteOffset, result.length);
  for (let i = 0; i < c.c_rows; i++) for (let j = 0; j < c.c_cols; j++) cBuffer[offset(i, j, c.c_ld, c.c_layout)] = values[offset(i, j, cMinor, c.c_layout)];
  writeFileSync(join(out, `${c.id}.bin`), new Uint8Array(cBuffer.buffer, cBuffer.byteOffset, cBuffer.byteLength));
}

/** values = alpha (X Y)[A's blocks] + beta values: X in the b fields, Y in the y fields, the values in c. */
async function runSddmm(folder, c, a, out) {
  if (c.c_layout !== "row") throw new Skip("the Node API's values are a packed array in the pattern's block order: they have no layout to pass");
  const operand = (name, prefix) => ({
    data: packed(load(folder, c, name, ARRAY[c[`${prefix}_dtype`]]), c[`${prefix}_rows`], c[`${prefix}_cols`], c[`${prefix}_ld`], c[`${prefix}_layout`]),
    rows: c[`${prefix}_rows`], cols: c[`${prefix}_cols`], layout: layoutName(c[`${prefix}_layout`]),
  });
  const options = { alpha: c.alpha, beta: c.beta };
  if (c.beta !== 0) options.values = packed(load(folder, c, "c", ARRAY[c.c_dtype]), c.c_rows, c.c_cols, c.c_ld, c.c_layout);
  save(folder, c, out, await sddmm(a, operand("b", "b"), operand("y", "y"), options));
  return "ok";
}

/** An fp8 A's scales: a number per tensor, else { kind, values }. */
function aScales(folder, c) {
  const values = load(folder, c, "a_scales", Float32Array);
  return c.a_scales === "per-tensor" && values.length === 1 ? values[0] : { kind: c.a_scales, values };
}

async function runCase(folder, c, device, out) {
  if (c.c_aliases_b) throw new Skip("the Node API copies its operands when the call is made: C cannot alias B");
  const cMinor = c.c_layout === "row" ? c.c_cols : c.c_rows;
  if (c.c_ld < cMinor) throw new Skip(NO_LD);
  const a = BsrMatrix.fromBsr({
    rows: c.rows, cols: c.cols, blockSize: [c.bh, c.bw],
    rowPtr: load(folder, c, "row_ptr", Int32Array), colIdx: load(folder, c, "col_idx", Int32Array),
    values: load(folder, c, "values", ARRAY[c.dtype]), dtype: DTYPE[c.dtype], device, sortIndices: c.sort === 1,
    ...(c.a_scales === "none" ? {} : { scales: aScales(folder, c) }),
  });
  if (c.op === "sddmm") return runSddmm(folder, c, a, out);
  const bBuffer = load(folder, c, "b", ARRAY[c.b_dtype]);
  const cBuffer = load(folder, c, "c", ARRAY[c.c_dtype]);
  const options = {
    transpose: c.op === "transpose", alpha: c.alpha, beta: c.beta, activation: c.activation, layout: layoutName(c.c_layout),
  };
  if (c.beta !== 0) options.c = packed(cBuffer, c.c_rows, c.c_cols, c.c_ld, c.c_layout);
  if (c.bias) options.bias = load(folder, c, "bias", ARRAY[c.bias_dtype]);
  if (c.b_scales !== "none") {
    // fp8: B's dtype and scales (a number per tensor, one per column as a Float32Array), C's dtype.
    const scales = load(folder, c, "b_scales", Float32Array);
    Object.assign(options, { bDtype: c.b_dtype, outDtype: DTYPE[c.c_dtype], bScales: c.b_scales === "per-tensor" ? scales[0] : scales });
  }
  const b = { data: packed(bBuffer, c.b_rows, c.b_cols, c.b_ld, c.b_layout), rows: c.b_rows, cols: c.b_cols, layout: layoutName(c.b_layout) };
  save(folder, c, out, await matmul(a, b, options));
  return "ok";
}

async function main(argv) {
  if (argv.length !== 3) {
    console.error("usage: node runner.mjs VECTORS OUT DEVICE   (DEVICE: cpu | cuda:N)");
    return 2;
  }
  const [folder, out, device] = argv;
  mkdirSync(out, { recursive: true });
  const lines = [];
  for (const c of readManifest(folder)) {
    let result;
    try {
      result = await runCase(folder, c, device, out);
    } catch (error) {
      const message = String(error?.message ?? error).split(/\s+/).join(" ");
      if (error instanceof Skip) result = `skip ${message}`;
      else if (error instanceof BsrmmError) result = `error ${error.code} ${message}`;
      else result = `error ${error?.name ?? typeof error} ${message}`; // not a BsrmmError: a disagreement the checker reports
    }
    lines.push(`${c.id} ${result}`);
  }
  writeFileSync(join(out, "results.txt"), `${lines.join("\n")}\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
