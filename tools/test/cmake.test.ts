import assert from "node:assert/strict";
import { test } from "node:test";
import { cmakeBuildJobs, cmakeConfigureArgs } from "../toolchain/cmake.ts";
import { fakeToolchain } from "./fake-toolchain.ts";

test("the toolchain's nvcc is passed to CMake when present", () => {
  const fake = fakeToolchain({ cuda: true });
  try {
    const args = cmakeConfigureArgs(["-DX=1"], fake.env);
    assert.ok(args.includes(`-DCMAKE_CUDA_COMPILER=${fake.layout.nvcc}`));
    assert.ok(!args.includes("-DBSRMM_CUDA=OFF"));
    assert.equal(args.at(-1), "-DX=1");
    assert.ok(args.includes("-DCMAKE_INSTALL_PREFIX=build/install"));
  } finally {
    fake.remove();
  }
});

test("BSRMM_NO_CUDA turns CUDA off explicitly, so a system nvcc cannot switch it on", () => {
  const fake = fakeToolchain({ cuda: true });
  try {
    const args = cmakeConfigureArgs([], { ...fake.env, BSRMM_NO_CUDA: "yes" });
    assert.ok(args.includes("-DBSRMM_CUDA=OFF"));
    assert.ok(!args.some((a) => a.startsWith("-DCMAKE_CUDA_COMPILER")));
  } finally {
    fake.remove();
  }
});

test("without a toolchain nvcc, CMake decides (no compiler forced)", () => {
  const fake = fakeToolchain();
  try {
    assert.ok(!cmakeConfigureArgs([], fake.env).some((a) => a.includes("CUDA")));
  } finally {
    fake.remove();
  }
});

test("build jobs default to 2 and follow a valid BSRMM_JOBS", () => {
  assert.equal(cmakeBuildJobs({}), 2);
  assert.equal(cmakeBuildJobs({ BSRMM_JOBS: "8" }), 8);
  assert.equal(cmakeBuildJobs({ BSRMM_JOBS: "zero" }), 2);
  assert.equal(cmakeBuildJobs({ BSRMM_JOBS: "0" }), 2);
});
