// Sizes that cannot be allocated are a BsrmmError with code BSRMM_STATUS_OUT_OF_MEMORY naming what
// was asked for, from the TypeScript layer and from the addon directly; never a process abort
// ("memory allocation of ... bytes failed") or a size that wraps to an empty tensor. Every size
// here exceeds a 47-bit address space (128 TiB), so the result does not depend on the machine's
// memory or overcommit policy.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrMatrix, BsrmmError, Tensor, matmul, matmulSync } from "../dist/esm/index.js";
import native from "../dist/native/binding.cjs";

const OOM = "BSRMM_STATUS_OUT_OF_MEMORY";

function oom(pattern) {
  return (e) => {
    assert.ok(e instanceof BsrmmError, `expected a BsrmmError, got ${e}`);
    assert.equal(e.code, OOM, e.message);
    assert.match(e.message, pattern);
    return true;
  };
}

test("tensors too large to allocate are OUT_OF_MEMORY", () => {
  // 2^52 f32 elements (16 PiB): the allocation fails.
  assert.throws(() => Tensor.zeros({ rows: 2 ** 26, cols: 2 ** 26 }), oom(/67108864x67108864 f32 tensor/));
  assert.throws(() => Tensor.empty({ rows: 2 ** 26, cols: 2 ** 26, dtype: "f64" }), oom(/67108864x67108864 f64 tensor/));
  // 2^62 elements: the byte count overflows (it used to wrap to 0 and make an empty tensor).
  assert.throws(() => Tensor.zeros({ rows: 2 ** 31, cols: 2 ** 31 }), oom(/2147483648x2147483648 f32 tensor \(rows x cols\) has more bytes than an address space holds/));
  assert.throws(() => Tensor.empty({ rows: 2 ** 31, cols: 2 ** 31, dtype: "bf16" }), oom(/2147483648x2147483648 bf16/));
  // The addon, called directly, says the same (it does not rely on the TypeScript layer).
  assert.throws(() => native.NativeTensor.allocateNew(2 ** 26, 2 ** 26, "row-major", "f32", "cpu", true), /^Error: BSRMM_STATUS_OUT_OF_MEMORY: /);
  assert.throws(() => native.NativeTensor.allocateNew(2 ** 31, 2 ** 31, "col-major", "f16", "cpu", false), /^Error: BSRMM_STATUS_OUT_OF_MEMORY: /);
  // The library still works afterwards.
  assert.deepEqual(Array.from(Tensor.zeros({ rows: 2, cols: 2 }).toArray()), [0, 0, 0, 0]);
});

/** A valid 2^30 x cols f32 matrix with no stored blocks (2^22 block rows of height 256). */
function tall(cols, blockWidth) {
  return BsrMatrix.fromBsr({ rows: 2 ** 30, cols, blockSize: [256, blockWidth], rowPtr: new Int32Array(2 ** 22 + 1), colIdx: [], values: new Float32Array(0) });
}

test("a multiply whose result cannot be allocated is OUT_OF_MEMORY, sync and async", async () => {
  // C is 2^30 x 2^16 f32: 256 TiB.
  const a = tall(1, 1);
  const b = new Float32Array(2 ** 16).fill(1);
  assert.throws(() => matmulSync(a, b), oom(/the result C \(1073741824x65536\)/));
  await assert.rejects(matmul(a, b), oom(/the result C \(1073741824x65536\)/));
  // Tensor operands: the result tensor is what cannot be allocated.
  await assert.rejects(matmul(a, Tensor.from(b, { rows: 1, cols: 2 ** 16 })), oom(/1073741824x65536 f32 tensor/));
  // A dense copy of a sparse matrix need not fit either: 2^30 x 2^18 f32 is 1 PiB.
  assert.throws(() => tall(2 ** 18, 256).toDense(), oom(/to_dense/));
  // Then a multiply that fits runs.
  const small = BsrMatrix.fromBsr({ rows: 2, cols: 2, blockSize: 1, rowPtr: [0, 1, 2], colIdx: [0, 1], values: new Float32Array([2, 3]) });
  assert.deepEqual(Array.from(await matmul(small, new Float32Array([1, 1]))), [2, 3]);
});
