// The pip wheel as a user gets it: built against the workspace's installed core, tagged
// manylinux, checked (check_wheel.py), installed into a fresh venv outside the workspace and run
// there (wheel_smoke.py). The checks are then shown to fail on wheels that break each rule.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { test } from "node:test";
import { buildWheel, smokeTestWheel, type BuiltWheel } from "../src/wheel.ts";

const checkScript = join(import.meta.dirname, "..", "src", "check_wheel.py");

function checkWheel(path: string, version: string, cuda: boolean): { status: number | null; stderr: string } {
  const result = spawnSync("python", [checkScript, path, "--version", version, cuda ? "--cuda" : "--no-cuda"], { encoding: "utf8" });
  return { status: result.status, stderr: result.stderr };
}

/** A copy of the wheel with `edit` applied by Python's zipfile (entries rewritten, names kept). */
function tampered(wheel: BuiltWheel, dir: string, name: string, edit: string): string {
  const path = join(dir, name);
  const script = `import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    for item in zin.infolist():
        zout.writestr(item, zin.read(item.filename))
${edit}`;
  const result = spawnSync("python", ["-c", script, wheel.path, path], { encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return path;
}

test("wheel: build, check, install into a fresh venv, multiply there; checks reject broken wheels", { timeout: 1_200_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-wheel-test-"));
  try {
    const wheel = buildWheel(join(dir, "dist"));
    assert.match(basename(wheel.path), new RegExp(`^bsrmm-${wheel.version.replace(/\./g, "\\.")}-cp\\d+-cp\\d+-manylinux_\\d+_\\d+_x86_64\\.whl$`));
    smokeTestWheel(wheel);

    const linuxTag = join(dir, basename(wheel.path).replace(/manylinux_\d+_\d+_x86_64/, "linux_x86_64"));
    copyFileSync(wheel.path, linuxTag);
    const grafted = tampered(wheel, dir, basename(wheel.path), '    zout.writestr("bsrmm.libs/libcudart-0123abcd.so.13", b"")');
    const cases: [string, { status: number | null; stderr: string }, RegExp][] = [
      ["not manylinux-tagged", checkWheel(linuxTag, wheel.version, wheel.cuda), /platform tag linux_x86_64/],
      ["a library grafted in", checkWheel(grafted, wheel.version, wheel.cuda), /copied libraries outside the manylinux policy/],
      ["another version", checkWheel(wheel.path, "0.0.0-not-this", wheel.cuda), /expected bsrmm 0\.0\.0-not-this/],
      [wheel.cuda ? "CUDA code, CPU-only expected" : "no CUDA code, CUDA expected",
        checkWheel(wheel.path, wheel.version, !wheel.cuda), /CUDA/],
    ];
    for (const [what, result, message] of cases) {
      assert.equal(result.status, 1, `check_wheel.py accepted a wheel with ${what}`);
      assert.match(result.stderr, message, what);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
