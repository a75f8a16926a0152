// The CUDA compiler, runtime and CCCL from NVIDIA's PyPI wheels (requirements/cuda.txt), installed
// with `pip install --target .toolchain/cuda`: no system CUDA and no root needed.
import { existsSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { cudaDisabled, type ToolchainLayout } from "./layout.ts";
import { probe, run } from "./run.ts";
import { hashOf, Stamp } from "./stamp.ts";

export const cudaRequirements = join(import.meta.dirname, "requirements", "cuda.txt");

/** Platforms NVIDIA publishes the nvcc wheels for. */
function cudaWheelsExist(): boolean {
  const { platform, arch } = process;
  return (platform === "linux" && (arch === "x64" || arch === "arm64")) || (platform === "win32" && arch === "x64");
}

export function ensureCuda(layout: ToolchainLayout): void {
  if (cudaDisabled()) {
    console.log("bootstrap: BSRMM_NO_CUDA is set: no CUDA toolchain, CPU path only");
    return;
  }
  if (!cudaWheelsExist()) {
    console.log(`bootstrap: no CUDA wheels for ${process.platform}-${process.arch}: CPU path only`);
    return;
  }
  const requirements = readFileSync(cudaRequirements, "utf8");
  const stamp = new Stamp(layout.stampDir, "cuda");
  if (existsSync(layout.nvcc) && stamp.matches(hashOf([requirements]))) {
    console.log(`bootstrap: CUDA toolchain up to date (${layout.nvcc})`);
    return;
  }
  console.log(`bootstrap: installing the CUDA toolchain into ${layout.cudaTarget}`);
  // pip --target does not replace an existing tree cleanly: install beside it, then swap.
  const staging = `${layout.cudaTarget}.staging`;
  rmSync(staging, { recursive: true, force: true });
  run(layout.venvPython, ["-m", "pip", "install", "--disable-pip-version-check", "--no-compile",
    "--target", staging, "-r", cudaRequirements]);
  rmSync(layout.cudaTarget, { recursive: true, force: true });
  renameSync(staging, layout.cudaTarget);
  // nvcc's profile adds lib64 to the link path (needed for -cudart static); the wheels ship lib.
  const lib64 = join(layout.cudaHome, "lib64");
  if (process.platform !== "win32" && !existsSync(lib64)) symlinkSync("lib", lib64);
  const version = probe(layout.nvcc, ["--version"]);
  if (version === undefined) throw new Error(`the installed nvcc does not run: ${layout.nvcc}`);
  console.log(`bootstrap: ${version.split("\n").at(-1) ?? "nvcc installed"}`);
  stamp.record(hashOf([requirements]));
}
