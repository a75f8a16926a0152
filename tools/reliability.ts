// core-cuda's sanitizer and fuzzing step, run by its `test` script after the plain ctest (so by
// `npm test`), from packages/core-cuda:   tsx ../../tools/reliability.ts
//   1. builds build/sanitize: the core (CPU only), its C++ tests, the reliability tests and the
//      fuzz targets, all under AddressSanitizer + UndefinedBehaviorSanitizer: with clang and
//      libFuzzer when they are installed, else with the system C++ compiler and no fuzz targets;
//   2. runs ctest there: every C++ test sanitized, the fuzz corpus and regressions replayed;
//   3. runs each libFuzzer target for BSRMM_FUZZ_SECONDS (default 45) from the committed corpus
//      and prints its executions; an input that crashes is kept in build/sanitize/fuzz-findings/
//      and fails the step (add it to fuzz/regressions/<target>/ once fixed).
//   4. with BSRMM_ASAN_PYTHON=1 only: builds the Python extension over an ASan + UBSan core (the
//      system compiler, whose runtimes preload into an unsanitized python) into
//      build/sanitize/python and runs packages/python's tests with them. Off by default: a second
//      build of the core and of the extension adds minutes on 2 cores.
// BSRMM_FUZZ_SECONDS=0 skips step 3; BSRMM_SANITIZE_STEP=0 skips everything (each with a message).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { cmakeBuildJobs } from "./toolchain/cmake.ts";
import { toolchainEnv } from "./toolchain/env.ts";
import { CommandError, probe, run } from "./toolchain/run.ts";
import { clangWithLibFuzzer } from "./toolchain/system.ts";

const buildDir = join("build", "sanitize");
const env = toolchainEnv();
const fuzzTargets = ["matrix_create", "matmul"];

function fuzzSeconds(): number {
  const value = Number.parseInt(process.env.BSRMM_FUZZ_SECONDS ?? "", 10);
  return Number.isInteger(value) && value >= 0 ? value : 45;
}

function configureAndBuild(fuzz: boolean): void {
  // -O1 with line tables: what the sanitizers are made for, and quicker to compile than -O2 -g.
  const args = ["-S", ".", "-B", buildDir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1", "-DBSRMM_CUDA=OFF", "-DBSRMM_BUILD_TESTS=ON",
    "-DBSRMM_SANITIZE=address;undefined"];
  // The compiler of an existing build tree cannot change; a fresh tree picks it.
  if (fuzz) args.push("-DCMAKE_CXX_COMPILER=clang++", "-DBSRMM_FUZZ=ON");
  run("cmake", args, { env });
  run("cmake", ["--build", buildDir, "-j", String(cmakeBuildJobs())], { env });
}

// Any sanitizer report ends the process with a failure (ASan aborts; UBSan halts), so ctest and
// the fuzz run fail on it. A failed allocation returns NULL as it does without ASan, so the
// out-of-memory paths under test run instead of ASan stopping at them. The caller's own
// *SAN_OPTIONS win.
const sanitizerEnv: NodeJS.ProcessEnv = {
  ...env,
  ASAN_OPTIONS: process.env.ASAN_OPTIONS ?? "abort_on_error=1:allocator_may_return_null=1:detect_stack_use_after_return=1",
  UBSAN_OPTIONS: process.env.UBSAN_OPTIONS ?? "print_stacktrace=1:halt_on_error=1",
};

interface FuzzResult {
  target: string;
  executions: number;
  seconds: number;
  corpus: number;
}

function runFuzzer(target: string, seconds: number): FuzzResult {
  const binary = join(buildDir, "fuzz", `${target}_fuzzer`);
  const work = join(buildDir, "fuzz-work", target);
  const findings = join(buildDir, "fuzz-findings");
  mkdirSync(work, { recursive: true });
  mkdirSync(findings, { recursive: true });
  // New inputs go to the work directory (first); the committed corpus is only read.
  const args = [`-max_total_time=${seconds}`, "-timeout=30", "-rss_limit_mb=3072", "-print_final_stats=1",
    `-artifact_prefix=${findings}/${target}-`, work, join("fuzz", "corpus", target)];
  console.log(`$ ${binary} ${args.join(" ")}`);
  const started = Date.now();
  const result = spawnSync(binary, args, { env: sanitizerEnv, encoding: "utf8", maxBuffer: 256 << 20 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  if (result.status !== 0) {
    console.log(output.split("\n").slice(-60).join("\n"));
    throw new CommandError(`fuzz target ${target} found a failing input (see ${findings}/; the report is above)`,
      result.status ?? 1);
  }
  const executions = Number(/stat::number_of_executed_units:\s*(\d+)/.exec(output)?.[1] ?? Number.NaN);
  const corpus = readdirSync(work).length + readdirSync(join("fuzz", "corpus", target)).length;
  return { target, executions, seconds: (Date.now() - started) / 1000, corpus };
}

function pythonUnderAsan(): void {
  if (process.env.BSRMM_ASAN_PYTHON !== "1") {
    console.log("reliability: Python tests under ASan SKIPPED (a second core + extension build; " +
      "BSRMM_ASAN_PYTHON=1 runs them)");
    return;
  }
  const runtimes = ["libasan.so", "libubsan.so"].map((lib) => probe("c++", [`-print-file-name=${lib}`], env));
  if (runtimes.some((path) => path === undefined || !existsSync(path))) {
    throw new CommandError("reliability: the system compiler has no shared libasan/libubsan to preload", 1);
  }
  const target = join(buildDir, "python");
  run("python", ["-m", "pip", "install", "--no-build-isolation", "--no-deps", "--disable-pip-version-check",
    "--upgrade", "--target", target, "-C", "cmake.define.BSRMM_PYTHON_CORE_FROM_SOURCE=ON",
    "-C", "cmake.define.BSRMM_CUDA=OFF", "-C", "cmake.define.BSRMM_SANITIZE=address;undefined",
    "-C", `build-dir=${join(buildDir, "python-build")}`, join("..", "python")], { env });
  // CPython keeps objects alive until exit by design: leak reports would be noise here.
  run("python", ["-m", "pytest", join("..", "python", "tests"), "-q", "-p", "no:cacheprovider"], {
    env: { ...sanitizerEnv, PYTHONPATH: target, LD_PRELOAD: runtimes.join(" "),
      ASAN_OPTIONS: "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1", UBSAN_OPTIONS: "print_stacktrace=1:halt_on_error=1" },
  });
}

function main(): void {
  if (process.env.BSRMM_SANITIZE_STEP === "0") {
    console.log("reliability: SKIP sanitized build, ctest and fuzzing (BSRMM_SANITIZE_STEP=0)");
    return;
  }
  const started = Date.now();
  const fuzz = clangWithLibFuzzer();
  if (!fuzz) {
    console.log("reliability: clang++ with libFuzzer not found: sanitized tests with the system compiler, " +
      "fuzzing SKIPPED (Debian/Ubuntu: apt-get install clang libclang-rt-dev)");
  }
  configureAndBuild(fuzz);
  run("ctest", ["--test-dir", buildDir, "--output-on-failure", "-j", String(cmakeBuildJobs())], { env: sanitizerEnv });
  const results: FuzzResult[] = [];
  const seconds = fuzzSeconds();
  if (fuzz && seconds > 0) {
    for (const target of fuzzTargets) results.push(runFuzzer(target, seconds));
  } else if (fuzz) {
    console.log("reliability: fuzzing SKIPPED (BSRMM_FUZZ_SECONDS=0)");
  }
  pythonUnderAsan();
  for (const r of results) {
    console.log(`reliability: fuzz ${r.target}: ${r.executions} executions in ${r.seconds.toFixed(0)} s ` +
      `(${(r.executions / r.seconds).toFixed(0)}/s), corpus ${r.corpus} inputs, no failure`);
  }
  console.log(`reliability: sanitized build, tests${results.length ? " and fuzzing" : ""} passed in ` +
    `${((Date.now() - started) / 1000).toFixed(0)} s`);
}

try {
  if (!existsSync("CMakeLists.txt") || !existsSync("fuzz")) {
    throw new CommandError(`reliability: run from packages/core-cuda (cwd is ${process.cwd()})`, 2);
  }
  main();
} catch (error) {
  console.error(`reliability: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof CommandError ? error.exitCode : 1);
}
