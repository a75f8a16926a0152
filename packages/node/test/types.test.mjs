// The published typings: matmul's result type follows A's dtype (Float32Array for f32, ...),
// tensors and matrices are Disposable, "cuda" is a device. Compiles test/types-check.ts, whose
// @ts-expect-error lines must fail and everything else must pass.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

const root = join(import.meta.dirname, "..");

test("results are typed by dtype in the .d.ts", () => {
  const tsc = join(root, "node_modules", ".bin", "tsc");
  const flags = ["--noEmit", "--strict", "--exactOptionalPropertyTypes", "--target", "es2022", "--lib", "es2023"];
  const module = ["--module", "nodenext", "--moduleResolution", "nodenext", "--types", "node", "--skipLibCheck", "false"];
  const result = spawnSync(tsc, [...flags, ...module, join(root, "test", "types-check.ts")], { encoding: "utf8" });
  assert.equal(result.status, 0, `tsc found type errors:\n${result.stdout}${result.stderr}`);
});
