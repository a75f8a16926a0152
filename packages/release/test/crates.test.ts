// The crates as crates.io would get them: packaged together (bsrmm-sys carrying the core's CMake
// project), and a new cargo project outside the workspace, on the unpacked packages, multiplies.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { crateNames, packageCrates, smokeTestCrates } from "../src/crates.ts";

// crates.io refuses larger uploads.
const CRATES_IO_LIMIT = 10 * 1024 * 1024;

test("crates: package bsrmm-sys, bsrmm, burn-bsrmm; build and run a multiply on the packaged sources", { timeout: 1_200_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-crates-test-"));
  try {
    // --allow-dirty: this checks what the packages hold; the release workflow packages a clean checkout.
    const crates = packageCrates(join(dir, "dist"), { allowDirty: true });
    assert.deepEqual(Object.keys(crates.files), [...crateNames]);
    for (const [name, file] of Object.entries(crates.files)) {
      assert.ok(statSync(file).size < CRATES_IO_LIMIT, `${name}: ${statSync(file).size} bytes`);
    }
    const sysFiles = execFileSync("tar", ["-tzf", crates.files["bsrmm-sys"] ?? ""], { encoding: "utf8" }).split("\n");
    const root = `bsrmm-sys-${crates.version}/`;
    assert.ok(sysFiles.includes(`${root}core-cuda/include/bsrmm/bsrmm.h`), "bsrmm-sys carries the core's headers");
    const strays = sysFiles.filter((f) => /\/core-cuda\/(tests|fuzz|build|node_modules)\//.test(f) || f.includes("/target/"));
    assert.deepEqual(strays, [], "bsrmm-sys carries only the core's CMake project");
    smokeTestCrates(crates);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
