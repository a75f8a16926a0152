// The environment a command sees when it runs "with the toolchain": the project's Python venv
// and CUDA compiler first on PATH, and the variables CMake and our scripts read.
import { existsSync } from "node:fs";
import { delimiter } from "node:path";
import { cudaDisabled, hasLocalCuda, repoRoot, toolchainLayout } from "./layout.ts";

const PATH_KEY = process.platform === "win32" ? "Path" : "PATH";

function prependPath(current: string | undefined, dirs: string[]): string {
  const existing = (current ?? "").split(delimiter).filter((d) => d !== "");
  const added = dirs.filter((d) => !existing.includes(d));
  return [...added, ...existing].join(delimiter);
}

export function toolchainEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const layout = toolchainLayout(base);
  const env: NodeJS.ProcessEnv = { ...base, BSRMM_ROOT: repoRoot, BSRMM_TOOLCHAIN: layout.root };
  const front: string[] = [];

  if (existsSync(layout.venvPython)) {
    front.push(layout.venvBin);
    // What `source venv/bin/activate` would set; pip and CMake's FindPython honour it.
    env.VIRTUAL_ENV = layout.venv;
    delete env.PYTHONHOME;
  }

  if (cudaDisabled(base)) {
    // A compiler found through these would switch CUDA back on behind the caller's back.
    delete env.CUDACXX;
    delete env.CMAKE_CUDA_COMPILER;
  } else if (hasLocalCuda(layout)) {
    front.push(layout.cudaBin);
    env.CUDACXX = layout.nvcc;
    env.CMAKE_CUDA_COMPILER = layout.nvcc;
    env.CUDA_HOME = layout.cudaHome;
  }

  if (existsSync(layout.nodeToolsBin)) front.push(layout.nodeToolsBin);

  // Windows env keys are case-insensitive but a copied object is not: write back the key we read.
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === "PATH") ?? PATH_KEY;
  env[pathKey] = prependPath(env[pathKey], front);
  return env;
}
