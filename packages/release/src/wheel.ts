// The pip wheel: packages/python built by scikit-build-core against the installed core (static,
// cudart static), tagged manylinux by auditwheel, then checked (check_wheel.py) and, on request,
// installed into a fresh venv outside the workspace and run there (wheel_smoke.py).
//   tsx src/wheel.ts <out dir> [--smoke]      (under tools/with-toolchain.ts: venv python, nvcc)
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { installedCore, repoRoot } from "./core.ts";
import { output, run } from "./run.ts";

export interface BuiltWheel {
  path: string;
  version: string;
  /** Whether it carries the CUDA backend; a CPU-only wheel says so at run time
   * (bsrmm.cuda_unavailable_reason()). */
  cuda: boolean;
}

const pythonPackage = join(repoRoot, "packages", "python");
const python = "python";

function onlyWheel(dir: string): string {
  const wheels = readdirSync(dir).filter((f) => f.endsWith(".whl"));
  if (wheels.length !== 1) throw new Error(`expected one wheel in ${dir}, found ${wheels.length}: ${wheels.join(", ")}`);
  return join(dir, wheels[0] ?? "");
}

export function pythonPackageVersion(): string {
  const pyproject = readFileSync(join(pythonPackage, "pyproject.toml"), "utf8");
  const version = /^\[project\][^[]*?^version\s*=\s*"([^"]+)"/ms.exec(pyproject)?.[1];
  if (version === undefined) throw new Error("packages/python/pyproject.toml: no [project] version");
  return version;
}

export function buildWheel(outDir: string, env: NodeJS.ProcessEnv = process.env): BuiltWheel {
  const core = installedCore(env);
  const version = pythonPackageVersion();
  const stage = mkdtempSync(join(tmpdir(), "bsrmm-wheel-"));
  try {
    const args = ["-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--disable-pip-version-check",
      "-w", join(stage, "raw")];
    if (core.overridden) {
      // Another core than the workspace's: a build dir of its own, so the package's build/ keeps
      // matching the workspace's core.
      args.push(`-Cbuild-dir=${join(stage, "build")}`, `-Ccmake.define.bsrmm_DIR=${join(core.prefix, "lib", "cmake", "bsrmm")}`);
    }
    // Otherwise the wheel reuses the build dir of `pnpm --filter @bsrmm/python build` (same
    // sources, same settings, same wheel tag), so nothing is compiled again.
    run(python, [...args, pythonPackage], { env });
    // auditwheel copies in any library outside the manylinux policy and retags the wheel to the
    // oldest manylinux its symbol versions allow; check_wheel.py then insists nothing was copied.
    run(python, ["-m", "auditwheel", "repair", "--wheel-dir", join(stage, "repaired"), onlyWheel(join(stage, "raw"))], { env });
    const repaired = onlyWheel(join(stage, "repaired"));
    mkdirSync(outDir, { recursive: true });
    const path = join(outDir, repaired.slice(repaired.lastIndexOf("/") + 1));
    copyFileSync(repaired, path);
    run(python, [join(import.meta.dirname, "check_wheel.py"), path, "--version", version, core.cuda ? "--cuda" : "--no-cuda"], { env });
    return { path, version, cuda: core.cuda };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Installs the wheel into a new venv in a temp dir (numpy from the package index: the version
 * the toolchain has, so pip's cache usually serves it) and runs wheel_smoke.py from there. */
export function smokeTestWheel(wheel: BuiltWheel, env: NodeJS.ProcessEnv = process.env): void {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-wheel-smoke-"));
  try {
    const venv = join(dir, "venv");
    run(python, ["-m", "venv", venv], { env });
    const venvPython = join(venv, "bin", "python");
    const numpy = output(python, ["-c", "import numpy; print(numpy.__version__)"], { env });
    run(venvPython, ["-m", "pip", "install", "--disable-pip-version-check", "--only-binary=:all:", wheel.path,
      `numpy==${numpy}`], { cwd: dir, env });
    // -I: only the venv's site-packages, never the workspace's sources or a PYTHONPATH.
    run(venvPython, ["-I", join(import.meta.dirname, "wheel_smoke.py"), "--version", wheel.version,
      wheel.cuda ? "--cuda" : "--no-cuda"], { cwd: dir, env });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [out, ...flags] = process.argv.slice(2);
  if (out === undefined || flags.some((f) => f !== "--smoke")) {
    console.error("usage: tsx src/wheel.ts <out dir> [--smoke]");
    process.exit(2);
  }
  try {
    const wheel = buildWheel(resolve(out));
    if (flags.includes("--smoke")) smokeTestWheel(wheel);
    console.log(wheel.path);
  } catch (error) {
    console.error(`wheel: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
