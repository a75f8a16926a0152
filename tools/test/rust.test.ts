import assert from "node:assert/strict";
import { test } from "node:test";
import { requiredRustVersion, versionAtLeast } from "../toolchain/rust.ts";

test("versions compare numerically, not as text", () => {
  assert.equal(versionAtLeast("1.95.0", "1.95"), true);
  assert.equal(versionAtLeast("1.100.0", "1.95"), true);
  assert.equal(versionAtLeast("1.94.1", "1.95"), false);
  assert.equal(versionAtLeast("2.0.0", "1.95"), true);
});

test("the Cargo workspace's rust-version is found", () => {
  assert.match(requiredRustVersion() ?? "", /^\d+\.\d+(\.\d+)?$/);
});
