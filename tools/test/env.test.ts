import assert from "node:assert/strict";
import { delimiter } from "node:path";
import { test } from "node:test";
import { toolchainEnv } from "../toolchain/env.ts";
import { repoRoot } from "../toolchain/layout.ts";
import { fakeToolchain } from "./fake-toolchain.ts";

test("venv and CUDA bin come first on PATH, CUDACXX and CMAKE_CUDA_COMPILER name that nvcc", () => {
  const fake = fakeToolchain({ venv: true, cuda: true });
  try {
    const env = toolchainEnv(fake.env);
    assert.deepEqual(env.PATH?.split(delimiter), [fake.layout.venvBin, fake.layout.cudaBin, "/usr/bin", "/bin"]);
    assert.equal(env.CUDACXX, fake.layout.nvcc);
    assert.equal(env.CMAKE_CUDA_COMPILER, fake.layout.nvcc);
    assert.equal(env.VIRTUAL_ENV, fake.layout.venv);
    assert.equal(env.BSRMM_ROOT, repoRoot);
    assert.equal(env.BSRMM_TOOLCHAIN, fake.layout.root);
  } finally {
    fake.remove();
  }
});

test("BSRMM_NO_CUDA=1 leaves the CUDA bin off PATH and clears a CUDACXX the caller had", () => {
  const fake = fakeToolchain({ venv: true, cuda: true });
  try {
    const env = toolchainEnv({ ...fake.env, BSRMM_NO_CUDA: "1", CUDACXX: "/somewhere/nvcc" });
    assert.ok(!(env.PATH ?? "").includes(fake.layout.cudaBin));
    assert.equal(env.CUDACXX, undefined);
    assert.equal(env.CMAKE_CUDA_COMPILER, undefined);
  } finally {
    fake.remove();
  }
});

test("BSRMM_NO_CUDA=0 does not disable CUDA", () => {
  const fake = fakeToolchain({ cuda: true });
  try {
    assert.equal(toolchainEnv({ ...fake.env, BSRMM_NO_CUDA: "0" }).CUDACXX, fake.layout.nvcc);
  } finally {
    fake.remove();
  }
});

test("parts that are not installed are not put on PATH, and running it twice adds nothing twice", () => {
  const fake = fakeToolchain();
  try {
    const once = toolchainEnv(fake.env);
    assert.equal(once.PATH, "/usr/bin:/bin");
    assert.equal(once.CUDACXX, undefined);
    assert.equal(once.VIRTUAL_ENV, undefined);
  } finally {
    fake.remove();
  }
  const full = fakeToolchain({ venv: true, cuda: true });
  try {
    const once = toolchainEnv(full.env);
    assert.equal(toolchainEnv(once).PATH, once.PATH);
  } finally {
    full.remove();
  }
});
