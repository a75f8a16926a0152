// System prerequisites the toolchain cannot bring itself: a C++ compiler, CMake, Ninja,
// GoogleTest headers (the core's C++ tests) and Python's venv module; optionally clang with
// libFuzzer (the core's fuzz targets, skipped without it). On Debian/Ubuntu as root the bootstrap
// installs what is missing with apt-get; elsewhere it says what to install.
import { existsSync, statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import { run, probe } from "./run.ts";

interface Prerequisite {
  what: string;
  present: () => boolean;
  aptPackage: string;
  /** What is skipped without it; absent for the required ones. */
  optionalFor?: string;
}

const gtestHeaders = ["/usr/include/gtest/gtest.h", "/usr/local/include/gtest/gtest.h"];

function onPath(command: string, versionFlag = "--version"): () => boolean {
  return () => probe(command, [versionFlag]) !== undefined;
}

/** clang++ whose runtime directory holds libFuzzer (tools/reliability.ts fuzzes only then). */
export function clangWithLibFuzzer(): boolean {
  const runtime = probe("clang++", ["--print-runtime-dir"]);
  return runtime !== undefined &&
    ["libclang_rt.fuzzer-x86_64.a", "libclang_rt.fuzzer-aarch64.a", "libclang_rt.fuzzer.a"].some((lib) =>
      existsSync(join(runtime, lib)));
}

export function pythonCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.BSRMM_PYTHON ?? (process.platform === "win32" ? "python" : "python3");
}

const prerequisites: Prerequisite[] = [
  { what: "a C++17 compiler (c++)", present: onPath("c++"), aptPackage: "g++" },
  { what: "CMake", present: onPath("cmake"), aptPackage: "cmake" },
  { what: "Ninja", present: onPath("ninja"), aptPackage: "ninja-build" },
  { what: "GoogleTest headers (gtest/gtest.h)", present: () => gtestHeaders.some(existsSync),
    aptPackage: "libgtest-dev" },
  { what: "Python 3 with the venv module", aptPackage: "python3-venv",
    present: () => probe(pythonCommand(), ["-c", "import venv, ensurepip"]) !== undefined },
  { what: "clang++", present: onPath("clang++"), aptPackage: "clang", optionalFor: "fuzzing" },
  { what: "libFuzzer", present: clangWithLibFuzzer, aptPackage: "libclang-rt-dev", optionalFor: "fuzzing" },
];

function canUseApt(): boolean {
  return process.platform === "linux" && process.getuid?.() === 0 && probe("apt-get", ["--version"]) !== undefined;
}

export function ensureSystemPrerequisites(): void {
  const missing = prerequisites.filter((p) => !p.present());
  if (missing.length === 0) {
    console.log("bootstrap: system prerequisites present (c++, cmake, ninja, gtest, python3 venv, clang + libFuzzer)");
    return;
  }
  const required = missing.filter((p) => p.optionalFor === undefined);
  const optional = missing.filter((p) => p.optionalFor !== undefined);
  const skipped = (why: string) => {
    for (const p of optional) console.log(`bootstrap: without ${p.what}, ${p.optionalFor} is skipped (${why})`);
  };
  console.log(`bootstrap: missing ${missing.map((p) => p.what).join(", ")}`);
  if (!canUseApt()) {
    skipped(`Debian/Ubuntu: sudo apt-get install -y ${optional.map((p) => p.aptPackage).join(" ")}`);
    if (required.length === 0) return;
    throw new Error(`install ${required.map((p) => p.what).join(", ")} ` +
      `(Debian/Ubuntu: sudo apt-get install -y ${required.map((p) => p.aptPackage).join(" ")}) and run again`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = (list: Prerequisite[]) =>
    run("apt-get", ["install", "-y", "--no-install-recommends", ...list.map((p) => p.aptPackage)], { env });
  run("apt-get", ["update"], { env });
  if (required.length > 0) install(required);
  if (optional.length > 0) {
    try {
      install(optional);
    } catch (error) {
      skipped(`apt-get could not install them: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const still = required.filter((p) => !p.present());
  if (still.length > 0) throw new Error(`still missing after apt-get: ${still.map((p) => p.what).join(", ")}`);
}

/**
 * Free space, in GiB, on the filesystem that will hold `path` (its nearest existing ancestor's),
 * as much as an unprivileged user may fill.
 */
export function freeGigabytes(path: string): number {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const stats = statfsSync(existing);
  return (stats.bavail * stats.bsize) / 1024 ** 3;
}
