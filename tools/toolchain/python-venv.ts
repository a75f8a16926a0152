// The project's Python venv (.toolchain/venv) with the exact pins of requirements/python.txt.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gpuHost, type ToolchainLayout } from "./layout.ts";
import { probe, run } from "./run.ts";
import { hashOf, Stamp } from "./stamp.ts";
import { pythonCommand } from "./system.ts";

export const pythonRequirements = join(import.meta.dirname, "requirements", "python.txt");
export const pythonGpuHostRequirements = join(import.meta.dirname, "requirements", "python-gpu-host.txt");

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
 * On a GPU host (layout.ts gpuHost), the GPU benchmark's Python packages (requirements/
 * python-gpu-host.txt: torch); elsewhere a line saying they are not installed and why.
 */
export function ensureGpuHostPythonPackages(layout: ToolchainLayout): void {
  if (!gpuHost()) {
    console.log("bootstrap: no working nvidia-smi (or BSRMM_NO_CUDA): torch not installed; the benchmark runs its CPU cases only");
    return;
  }
  const requirements = readFileSync(pythonGpuHostRequirements, "utf8");
  const version = probe(layout.venvPython, ["--version"]) ?? "unknown";
  const stamp = new Stamp(layout.stampDir, "python-gpu-host");
  if (stamp.matches(hashOf([version, requirements]))) {
    console.log("bootstrap: GPU benchmark packages up to date (torch)");
    return;
  }
  console.log("bootstrap: GPU host: installing the GPU benchmark's Python packages (torch)");
  run(layout.venvPython, ["-m", "pip", "install", "--disable-pip-version-check", "-r", pythonGpuHostRequirements]);
  stamp.record(hashOf([version, requirements]));
}
