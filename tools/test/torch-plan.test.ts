import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { torchCpuHostRequirements, torchPlan, torchRequirements } from "../toolchain/python-venv.ts";

test("a machine without a driver installs the pinned closure less Triton, --no-deps, without pip's cache", () => {
  const plan = torchPlan(false, 60, "/x/.toolchain/venv");
  assert.equal(plan.skipReason, undefined);
  assert.equal(plan.requirementsFile, torchCpuHostRequirements);
  assert.ok(plan.pipArgs.includes("--no-deps") && plan.pipArgs.includes("--no-cache-dir"));
  assert.deepEqual(plan.pipArgs.slice(-2), ["-r", torchCpuHostRequirements]);
});

test("a GPU host lets pip resolve torch.txt (Triton included)", () => {
  const plan = torchPlan(true, 60, "/x/.toolchain/venv");
  assert.equal(plan.skipReason, undefined);
  assert.equal(plan.requirementsFile, torchRequirements);
  assert.ok(!plan.pipArgs.includes("--no-deps") && plan.pipArgs.includes("--no-cache-dir"));
});

test("without room for its peak, torch is left out with a reason that names the space and the skip", () => {
  const plan = torchPlan(false, 5.2, "/x/.toolchain/venv");
  assert.match(plan.skipReason ?? "", /^5\.2 GB free under \/x\/\.toolchain\/venv, and its install needs about 7\.5 GB/);
  assert.match(plan.skipReason ?? "", /tests will skip/);
  assert.ok(torchPlan(true, 8, "/v").skipReason !== undefined, "a GPU host needs more (Triton)");
});

test("the CPU host's closure pins torch.txt's torch and leaves out only Triton", () => {
  const pins = (file: string) =>
    readFileSync(file, "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
  const torchPin = pins(torchRequirements).find((line) => line.startsWith("torch=="));
  const closure = pins(torchCpuHostRequirements);
  assert.ok(torchPin !== undefined && closure.includes(torchPin), `${torchPin} in torch-cpu-host.txt`);
  assert.ok(closure.every((line) => /^[A-Za-z0-9_.-]+==[^=\s]+$/.test(line)), "every line an exact pin");
  assert.ok(!closure.some((line) => line.toLowerCase().startsWith("triton")));
});
