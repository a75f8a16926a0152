// The CMake arguments every workspace build of a CMake project uses (core-cuda and, through
// find_package, everything that links it), decided from the toolchain state and the environment.
import { cudaDisabled, hasLocalCuda, toolchainLayout } from "./layout.ts";

/** Build tree build/, install prefix build/install: where the bindings' find_package(bsrmm) looks. */
export function cmakeConfigureArgs(extra: string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const layout = toolchainLayout(env);
  const args = ["-S", ".", "-B", "build", "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
    "-DCMAKE_INSTALL_PREFIX=build/install"];
  // Explicit OFF, not just "no CUDACXX": CMake would otherwise find a system nvcc on its own.
  if (cudaDisabled(env)) args.push("-DBSRMM_CUDA=OFF");
  else if (hasLocalCuda(layout)) args.push(`-DCMAKE_CUDA_COMPILER=${layout.nvcc}`);
  return [...args, ...extra];
}

/** Parallel build jobs: 2 unless BSRMM_JOBS says more (the dev machines share 2 cores). */
export function cmakeBuildJobs(env: NodeJS.ProcessEnv = process.env): number {
  const jobs = Number.parseInt(env.BSRMM_JOBS ?? "", 10);
  return Number.isInteger(jobs) && jobs > 0 ? jobs : 2;
}
