import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { fakeToolchain } from "./fake-toolchain.ts";

const cli = join(import.meta.dirname, "..", "with-toolchain.ts");

function withToolchain(args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, ["--import", "tsx", cli, ...args], { encoding: "utf8", env, cwd: import.meta.dirname });
}

test("the command runs with the toolchain environment and its exit status is ours", () => {
  const fake = fakeToolchain({ cuda: true });
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, ...fake.env };
    delete env.BSRMM_NO_CUDA; // the caller's CPU-only setting would clear CUDACXX
    const result = withToolchain(["sh", "-c", 'echo "$CUDACXX"; exit 7'], env);
    assert.equal(result.status, 7);
    assert.equal(result.stdout.trim(), fake.layout.nvcc);
  } finally {
    fake.remove();
  }
});

test("a command killed by a signal exits 128 + the signal number", () => {
  const result = withToolchain(["sh", "-c", "kill -TERM $$"], process.env);
  assert.equal(result.status, 143);
});

test("a missing command fails with 127 and says so", () => {
  const result = withToolchain(["bsrmm-no-such-command"], process.env);
  assert.equal(result.status, 127);
  assert.match(result.stderr, /bsrmm-no-such-command.*not found/);
});

test("no command is a usage error", () => {
  const result = withToolchain([], process.env);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /usage/);
});
