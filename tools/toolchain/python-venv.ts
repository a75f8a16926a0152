// The project's Python venv (.toolchain/venv) with the exact pins of requirements/python.txt.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gpuHost, type ToolchainLayout } from "./layout.ts";
import { probe, run } from "./run.ts";
import { hashOf, Stamp } from "./stamp.ts";
import { freeGigabytes, pythonCommand } from "./system.ts";

export const pythonRequirements = join(import.meta.dirname, "requirements", "python.txt");
export const torchRequirements = join(import.meta.dirname, "requirements", "torch.txt");
export const torchCpuHostRequirements = join(import.meta.dirname, "requirements", "torch-cpu-host.txt");

// pip's cache would keep a second copy of every wheel (torch's are 2.7 GB): CI machines are fresh,
// and the disk, not the network, is what ran out (stop 46: "No space left on device" mid-install).
const PIP_INSTALL = ["-m", "pip", "install", "--disable-pip-version-check", "--no-cache-dir"];

// Peak disk of the torch install: pip downloads every wheel before it unpacks any (2.7 GB on a CPU
// host, 3.0 GB with Triton) and the unpacked packages take 4.2 GB (5.2 GB). Measured 2026-11-28.
const TORCH_DISK_NEED_GB = { cpuHost: 7.5, gpuHost: 9 } as const;

const MIN_PYTHON: readonly [number, number] = [3, 10];

function checkBasePython(python: string): void {
  const version = probe(python, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]);
  if (version === undefined) throw new Error(`cannot run '${python}' (set BSRMM_PYTHON to a Python >= 3.10)`);
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    throw new Error(`'${python}' is Python ${version}; bsrmm needs >= ${MIN_PYTHON.join(".")} (set BSRMM_PYTHON)`);
  }
}

export function ensurePythonVenv(layout: ToolchainLayout): void {
  const venvVersion = existsSync(layout.venvPython) ? probe(layout.venvPython, ["--version"]) : undefined;
  const requirements = readFileSync(pythonRequirements, "utf8");
  const stamp = new Stamp(layout.stampDir, "python-venv");
  if (venvVersion !== undefined && stamp.matches(hashOf([venvVersion, requirements]))) {
    console.log(`bootstrap: Python venv up to date (${venvVersion}, ${layout.venv})`);
    return;
  }
  if (venvVersion === undefined) {
    const python = pythonCommand();
    checkBasePython(python);
    console.log(`bootstrap: creating the Python venv at ${layout.venv}`);
    // --clear: a venv whose interpreter no longer runs (base Python removed) is rebuilt from scratch.
    run(python, ["-m", "venv", "--clear", layout.venv]);
  }
  console.log("bootstrap: installing the pinned Python packages");
  run(layout.venvPython, [...PIP_INSTALL, "-r", pythonRequirements]);
  const version = probe(layout.venvPython, ["--version"]) ?? "unknown";
  stamp.record(hashOf([version, requirements]));
}

/** How this machine gets torch: the requirements file and pip's arguments, or why it is left out. */
export interface TorchPlan {
  requirementsFile: string;
  pipArgs: string[];
  /** Set when torch is left out: the bootstrap prints it instead of installing. */
  skipReason?: string;
  summary: string;
}

/**
 * torch on every machine: bsrmm.torch's tests run on the CPU in CI, and the GPU benchmark needs it.
 * PyPI has no CPU-only Linux build, so both hosts install the CUDA wheel (it runs on the CPU when no
 * driver answers); a machine without a driver takes the pinned closure less Triton, `--no-deps`.
 *
 * Without room for it (a full disk would fail the install halfway and every later step with it),
 * torch is left out with a message saying so: bsrmm.torch's test modules then skip, each with the
 * reason "No module named 'torch'", and everything else still builds and runs.
 */
export function torchPlan(onGpuHost: boolean, freeGb: number, where: string): TorchPlan {
  const requirementsFile = onGpuHost ? torchRequirements : torchCpuHostRequirements;
  const pipArgs = [...PIP_INSTALL, ...(onGpuHost ? [] : ["--no-deps"]), "-r", requirementsFile];
  const need = onGpuHost ? TORCH_DISK_NEED_GB.gpuHost : TORCH_DISK_NEED_GB.cpuHost;
  const host = onGpuHost ? "GPU host" : "no working nvidia-smi: torch runs on the CPU, Triton left out";
  const summary = `${host}; ${freeGb.toFixed(1)} GB free, about ${need} GB needed`;
  if (freeGb >= need) return { requirementsFile, pipArgs, summary };
  const skipReason =
    `${freeGb.toFixed(1)} GB free under ${where}, and its install needs about ${need} GB at its peak. ` +
    `bsrmm.torch's tests will skip ("No module named 'torch'"). Free some space and run the bootstrap again to install it.`;
  return { requirementsFile, pipArgs, skipReason, summary };
}

export function ensureTorch(layout: ToolchainLayout): void {
  const plan = torchPlan(gpuHost(), freeGigabytes(layout.venv), layout.venv);
  const requirements = readFileSync(plan.requirementsFile, "utf8");
  const version = probe(layout.venvPython, ["--version"]) ?? "unknown";
  const stamp = new Stamp(layout.stampDir, "python-torch");
  if (stamp.matches(hashOf([version, requirements]))) {
    console.log("bootstrap: torch up to date");
    return;
  }
  if (plan.skipReason !== undefined) {
    console.log(`bootstrap: NOT installing torch: ${plan.skipReason}`);
    return;
  }
  console.log(`bootstrap: installing torch (${plan.summary})`);
  run(layout.venvPython, plan.pipArgs);
  stamp.record(hashOf([version, requirements]));
}
