// Where the project-local toolchain lives. Every tool (bootstrap, with-toolchain, main) asks
// this file, so the layout of .toolchain/ is written down exactly once.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const isWindows = process.platform === "win32";

/** The repository root: tools/ sits directly under it, whatever the caller's cwd is. */
export const repoRoot: string = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface ToolchainLayout {
  /** .toolchain/ at the repo root, or BSRMM_TOOLCHAIN when the caller points elsewhere. */
  root: string;
  /** Python venv with the pinned build and test packages. */
  venv: string;
  venvBin: string;
  venvPython: string;
  /** `pip install --target` destination of the CUDA wheels. */
  cudaTarget: string;
  /** The CUDA toolkit inside those wheels: bin/, include/, lib/ (+ lib64 link), nvvm/. */
  cudaHome: string;
  cudaBin: string;
  nvcc: string;
  /** Project-local pnpm (a pinned npm install), used when none is on PATH. */
  nodeTools: string;
  nodeToolsBin: string;
  /** Stamp files: hash of the pinned requirement lists that the installed state satisfies. */
  stampDir: string;
}

export function toolchainLayout(env: NodeJS.ProcessEnv = process.env): ToolchainLayout {
  const root = resolve(env.BSRMM_TOOLCHAIN ?? join(repoRoot, ".toolchain"));
  const venv = join(root, "venv");
  const venvBin = join(venv, isWindows ? "Scripts" : "bin");
  const cudaTarget = join(root, "cuda");
  const cudaHome = join(cudaTarget, "nvidia", "cu13");
  const cudaBin = join(cudaHome, "bin");
  const nodeTools = join(root, "node");
  return {
    root,
    venv,
    venvBin,
    venvPython: join(venvBin, isWindows ? "python.exe" : "python"),
    cudaTarget,
    cudaHome,
    cudaBin,
    nvcc: join(cudaBin, isWindows ? "nvcc.exe" : "nvcc"),
    nodeTools,
    nodeToolsBin: join(nodeTools, "node_modules", ".bin"),
    stampDir: join(root, "stamps"),
  };
}

/** BSRMM_NO_CUDA=1 (or true/yes/on) means: build and test the CPU path only. */
export function cudaDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.BSRMM_NO_CUDA ?? "").trim().toLowerCase();
  return value !== "" && value !== "0" && value !== "false" && value !== "no" && value !== "off";
}

export function hasLocalCuda(layout: ToolchainLayout): boolean {
  return existsSync(layout.nvcc);
}

/**
 * A machine whose NVIDIA driver answers (`nvidia-smi -L` lists a GPU) and where CUDA is not
 * switched off: the bootstrap installs the GPU benchmark's cuSPARSE and cuBLAS only here.
 */
export function gpuHost(env: NodeJS.ProcessEnv = process.env): boolean {
  if (cudaDisabled(env)) return false;
  const result = spawnSync("nvidia-smi", ["-L"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return result.status === 0 && /GPU \d+:/.test(result.stdout ?? "");
}
