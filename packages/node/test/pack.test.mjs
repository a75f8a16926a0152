// The npm packages as published: pack `bsrmm` and `bsrmm-linux-x64-gnu`, install both into an
// empty directory outside the workspace, and run the example and pack-smoke.mjs (random operands,
// every element checked) there.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

test("npm pack -> install in an empty directory -> the example and the smoke test run", { timeout: 300_000 }, (t) => {
  const work = mkdtempSync(join(tmpdir(), "bsrmm-pack-test-"));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const tsx = join(root, "node_modules", ".bin", "tsx");
  const tarballs = execFileSync(tsx, [join(root, "scripts", "pack.ts"), join(work, "tarballs")], { encoding: "utf8" })
    .trim()
    .split("\n");
  assert.equal(tarballs.length, 2, `expected two tarballs, got ${tarballs}`);

  const app = join(work, "app");
  execFileSync("mkdir", ["-p", app]);
  execFileSync("npm", ["init", "-y"], { cwd: app, stdio: "ignore" });
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs], { cwd: app, stdio: "inherit" });
  copyFileSync(join(root, "examples", "example.mjs"), join(app, "example.mjs"));
  const output = execFileSync("node", ["example.mjs"], { cwd: app, encoding: "utf8" });
  console.log(`# ${output.trim()}`);
  assert.match(output, /max \|error\|/);
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  for (const tarball of tarballs) assert.match(tarball, new RegExp(`-${version.replace(/\./g, "\\.")}\\.tgz$`), "tarball version");
  copyFileSync(join(root, "test", "pack-smoke.mjs"), join(app, "pack-smoke.mjs"));
  const smoke = execFileSync("node", ["pack-smoke.mjs", version], { cwd: app, encoding: "utf8" });
  console.log(`# ${smoke.trim().replace(/\n/g, "\n# ")}`);
  assert.match(smoke, /pack-smoke: ok/);
  const license = readFileSync(join(root, "..", "..", "LICENSE"), "utf8");
  for (const pkg of ["bsrmm", "bsrmm-linux-x64-gnu"])
    assert.equal(readFileSync(join(app, "node_modules", pkg, "LICENSE"), "utf8"), license, `${pkg} ships the LICENSE`);
  // CommonJS consumers get the same package.
  const cjs = execFileSync("node", ["-e", "const b = require('bsrmm'); console.log(typeof b.matmul, b.version())"], { cwd: app, encoding: "utf8" });
  assert.match(cjs, /^function \d+\.\d+\.\d+/);
});
