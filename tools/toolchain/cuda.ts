// The CUDA compiler, runtime and CCCL from NVIDIA's PyPI wheels (requirements/cuda.txt), installed
// with `pip install --target .toolchain/cuda`: no system CUDA and no root needed.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { cudaDisabled, gpuHost, type ToolchainLayout } from "./layout.ts";
import { probe, run } from "./run.ts";
import { hashOf, Stamp } from "./stamp.ts";

export const cudaRequirements = join(import.meta.dirname, "requirements", "cuda.txt");
// cuSPARSE + cuBLAS for the benchmark's cuSPARSE peer, on GPU hosts only (see the file).
export const cudaGpuHostRequirements = join(import.meta.dirname, "requirements", "cuda-gpu-host.txt");

/** Platforms NVIDIA publishes the nvcc wheels for. */
function cudaWheelsExist(): boolean {
  const { platform, arch } = process;
  return (platform === "linux" && (arch === "x64" || arch === "arm64")) || (platform === "win32" && arch === "x64");
}

/**
 * The wheels lay the toolkit out for loading, not for building against; add the two names a
 * system toolkit has and the wheels lack. Cheap and idempotent, so it runs on every bootstrap.
 */
function completeLibraryLinks(layout: ToolchainLayout): void {
  if (process.platform === "win32") return;
  // nvcc's profile puts lib64 on the link path (needed for -cudart static); the wheels ship lib.
  const lib64 = join(layout.cudaHome, "lib64");
  if (!existsSync(lib64)) symlinkSync("lib", lib64);
  // CMake's FindCUDAToolkit requires the development name libcudart.so; the wheels ship only
  // the runtime's soname libcudart.so.13 (same for every versioned library there).
  const lib = join(layout.cudaHome, "lib");
  for (const name of readdirSync(lib)) {
    const devName = /^(lib\w+\.so)\.\d+$/.exec(name)?.[1];
    if (devName !== undefined && !existsSync(join(lib, devName))) symlinkSync(name, join(lib, devName));
  }
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
  const onGpuHost = gpuHost();
  const lists = onGpuHost ? [cudaRequirements, cudaGpuHostRequirements] : [cudaRequirements];
  const requirements = lists.map((file) => readFileSync(file, "utf8")).join("\n");
  const stamp = new Stamp(layout.stampDir, "cuda");
  if (existsSync(layout.nvcc) && stamp.matches(hashOf([requirements]))) {
    completeLibraryLinks(layout);
    console.log(`bootstrap: CUDA toolchain up to date (${layout.nvcc})`);
    return;
  }
  console.log(`bootstrap: installing the CUDA toolchain into ${layout.cudaTarget}` +
    (onGpuHost ? " (GPU host: with cuSPARSE and cuBLAS for the benchmark's peers)" : ""));
  // pip --target does not replace an existing tree cleanly: install beside it, then swap.
  const staging = `${layout.cudaTarget}.staging`;
  rmSync(staging, { recursive: true, force: true });
  run(layout.venvPython, ["-m", "pip", "install", "--disable-pip-version-check", "--no-compile",
    "--target", staging, ...lists.flatMap((file) => ["-r", file])]);
  rmSync(layout.cudaTarget, { recursive: true, force: true });
  renameSync(staging, layout.cudaTarget);
  completeLibraryLinks(layout);
  const version = probe(layout.nvcc, ["--version"]);
  if (version === undefined) throw new Error(`the installed nvcc does not run: ${layout.nvcc}`);
  console.log(`bootstrap: ${version.split("\n").at(-1) ?? "nvcc installed"}`);
  stamp.record(hashOf([requirements]));
}
