// variants(): the matmul variants, then the SDDMM ones; variants("matmul") / variants("sddmm")
// list one kind, and any other kind is a BsrmmError with the invalid-argument code.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrmmError, variants } from "../dist/esm/index.js";

test("the SDDMM variants follow the matmul ones and kind lists each", () => {
  const matmul = variants("matmul");
  const sddmm = variants("sddmm");
  assert.deepEqual(variants(), [...matmul, ...sddmm]);
  assert.ok(sddmm.includes("cpu_sddmm_blocked") && sddmm.includes("cpu_sddmm_reference_f64acc"), sddmm.join());
  assert.ok(matmul.includes("cpu_blocked_simd"), matmul.join());
  assert.ok(sddmm.every((name) => name.includes("_sddmm_")), sddmm.join());
  assert.ok(!matmul.some((name) => name.includes("_sddmm_")), matmul.join());
});

test("an unknown kind is an invalid argument", () => {
  assert.throws(
    () => variants("spmm"),
    (e) => e instanceof BsrmmError && e.code === "BSRMM_STATUS_INVALID_ARGUMENT" && /kind must be "matmul", "sddmm" or undefined; got "spmm"/.test(e.message),
  );
});
