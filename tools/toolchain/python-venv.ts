// The project's Python venv (.toolchain/venv) with the exact pins of requirements/python.txt.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gpuHost, type ToolchainLayout } from "./layout.ts";
import { probe, run } from "./run.ts";
import { hashOf, Stamp } from "./stamp.ts";
import { pythonCommand } from "./system.ts";

export const pythonRequirements = join(import.meta.dirname, "requirements", "python.txt");
export const torchRequirements = join(import.meta.dirname, "requirements", "torch.txt");

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
  run(layout.venvPython, ["-m", "pip", "install", "--disable-pip-version-check", "-r", pythonRequirements]);
  const version = probe(layout.venvPython, ["--version"]) ?? "unknown";
  stamp.record(hashOf([version, requirements]));
}

/**
 * torch (requirements/torch.txt) on every machine: bsrmm.torch's tests run on the CPU in CI, and
 * the GPU benchmark needs it. The same CUDA wheel everywhere (PyPI has no CPU-only Linux build);
 * it runs on the CPU when no driver answers.
 */
export function ensureTorch(layout: ToolchainLayout): void {
  const requirements = readFileSync(torchRequirements, "utf8");
  const version = probe(layout.venvPython, ["--version"]) ?? "unknown";
  const stamp = new Stamp(layout.stampDir, "python-torch");
  if (stamp.matches(hashOf([version, requirements]))) {
    console.log("bootstrap: torch up to date");
    return;
  }
  const where = gpuHost() ? "GPU host" : "no working nvidia-smi (torch runs on the CPU)";
  console.log(`bootstrap: installing torch (${where}; about 3 GB with its CUDA libraries)`);
  run(layout.venvPython, ["-m", "pip", "install", "--disable-pip-version-check", "-r", torchRequirements]);
  stamp.record(hashOf([version, requirements]));
}
