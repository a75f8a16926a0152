// System prerequisites the toolchain cannot bring itself: a C++ compiler, CMake, Ninja,
// GoogleTest headers (the core's C++ tests) and Python's venv module. On Debian/Ubuntu as root
// the bootstrap installs what is missing with apt-get; elsewhere it says what to install.
import { existsSync } from "node:fs";
import { run, probe } from "./run.ts";

interface Prerequisite {
  what: string;
  present: () => boolean;
  aptPackage: string;
}

const gtestHeaders = ["/usr/include/gtest/gtest.h", "/usr/local/include/gtest/gtest.h"];

function onPath(command: string, versionFlag = "--version"): () => boolean {
  return () => probe(command, [versionFlag]) !== undefined;
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
];

function canUseApt(): boolean {
  return process.platform === "linux" && process.getuid?.() === 0 && probe("apt-get", ["--version"]) !== undefined;
}

export function ensureSystemPrerequisites(): void {
  const missing = prerequisites.filter((p) => !p.present());
  if (missing.length === 0) {
    console.log("bootstrap: system prerequisites present (c++, cmake, ninja, gtest, python3 venv)");
    return;
  }
  const packages = missing.map((p) => p.aptPackage);
  console.log(`bootstrap: missing ${missing.map((p) => p.what).join(", ")}`);
  if (!canUseApt()) {
    throw new Error(`install ${missing.map((p) => p.what).join(", ")} ` +
      `(Debian/Ubuntu: sudo apt-get install -y ${packages.join(" ")}) and run again`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  run("apt-get", ["update"], { env });
  run("apt-get", ["install", "-y", "--no-install-recommends", ...packages], { env });
  const still = missing.filter((p) => !p.present());
  if (still.length > 0) throw new Error(`still missing after apt-get: ${still.map((p) => p.what).join(", ")}`);
}
