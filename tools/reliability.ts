// core-cuda's sanitizer and fuzzing step, run by its `test` script after the plain ctest (so by
// `npm test`), from packages/core-cuda:   tsx ../../tools/reliability.ts
//   1. builds build/sanitize: the core (CPU only), its C++ tests, the reliability tests and the
//      fuzz targets, all under AddressSanitizer + UndefinedBehaviorSanitizer: with clang and
//      libFuzzer when they are installed, else with the system C++ compiler and no fuzz targets;
//   2. runs ctest there: every C++ test sanitized, the fuzz corpus and regressions replayed; the
//      stress, fault, overflow and replay counts the tests print are repeated in this log;
//   3. runs each libFuzzer target for BSRMM_FUZZ_SECONDS (default 45) from the committed corpus
//      and prints its executions; an input that crashes is kept in build/sanitize/fuzz-findings/
//      and fails the step (add it to fuzz/regressions/<target>/ once fixed).
//   4. builds the Python extension, itself sanitized, over that same core (installed into
//      build/sanitize/install; the same compiler, so one set of runtimes) into
//      build/sanitize/python, and runs packages/python's whole test suite with the runtime
//      preloaded into the (unsanitized) interpreter.
// BSRMM_FUZZ_SECONDS=0 skips step 3, BSRMM_ASAN_PYTHON=0 step 4; BSRMM_SANITIZE_STEP=0 skips
// everything (each with a message).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cmakeBuildJobs } from "./toolchain/cmake.ts";
import { toolchainEnv } from "./toolchain/env.ts";
import { CommandError, probe, run } from "./toolchain/run.ts";
import { clangWithLibFuzzer } from "./toolchain/system.ts";

const buildDir = join("build", "sanitize");
const env = toolchainEnv();
const fuzzTargets = ["matrix_create", "matmul"];
// -O1 with line tables: what the sanitizers are made for, and quicker to compile than -O2 -g.
const sanitizedFlags = "-O1 -g1";

function fuzzSeconds(): number {
  const value = Number.parseInt(process.env.BSRMM_FUZZ_SECONDS ?? "", 10);
  return Number.isInteger(value) && value >= 0 ? value : 45;
}

function configureAndBuild(fuzz: boolean): void {
  const args = ["-S", ".", "-B", buildDir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
    `-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=${sanitizedFlags}`, "-DBSRMM_CUDA=OFF", "-DBSRMM_BUILD_TESTS=ON",
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

// What the reliability tests print about their work ("[ stress   ] 8 threads, ..."), and the
// replays' "replay matmul: 560 inputs ran cleanly", from the log ctest keeps of every test's output
// (--output-on-failure shows nothing of a test that passed).
function testCounts(): string[] {
  const log = join(buildDir, "Testing", "Temporary", "LastTest.log");
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").split("\n")
    .filter((line) => /^\[ (stress|fault|overflow|nonfinite)/.test(line) || /^replay .*inputs ran cleanly/.test(line));
}

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

// The compiler of the sanitized build tree: the extension must be built by it too, so that one
// set of sanitizer runtimes serves both.
function sanitizedBuildCompiler(): string {
  const cache = readFileSync(join(buildDir, "CMakeCache.txt"), "utf8");
  const compiler = /^CMAKE_CXX_COMPILER:[A-Z]+=(.+)$/m.exec(cache)?.[1];
  if (compiler === undefined) throw new CommandError(`reliability: no CMAKE_CXX_COMPILER in ${buildDir}`, 1);
  return compiler;
}

// The sanitizer runtimes to preload into python: clang's one ASan runtime (UBSan's handlers are
// inside it), or GCC's ASan and UBSan libraries.
function sanitizerRuntimes(compiler: string): string[] {
  const arch = process.arch === "arm64" ? "aarch64" : "x86_64";
  const clang = /clang/i.test(probe(compiler, ["--version"], env) ?? "");
  const names = clang ? [`libclang_rt.asan-${arch}.so`] : ["libasan.so", "libubsan.so"];
  return names.map((name) => {
    const path = probe(compiler, [`-print-file-name=${name}`], env);
    if (path === undefined || !existsSync(path)) {
      throw new CommandError(`reliability: ${compiler} has no shared ${name} to preload into python`, 1);
    }
    return path;
  });
}

function pythonUnderSanitizers(): void {
  const compiler = sanitizedBuildCompiler();
  const runtimes = sanitizerRuntimes(compiler);
  const prefix = resolve(buildDir, "install");
  run("cmake", ["--install", buildDir, "--prefix", prefix], { env });
  const target = join(buildDir, "python");
  const flags = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer";
  // -O0 for the binding (thin glue over the -O1 core): pybind11 code compiles in half the time
  // (90 s instead of 180 s of CPU on this repo's 2-core machines) and the tests run as fast.
  run("python", ["-m", "pip", "install", "--no-build-isolation", "--no-deps", "--disable-pip-version-check",
    "--upgrade", "--target", target, "-C", `cmake.define.bsrmm_DIR=${join(prefix, "lib", "cmake", "bsrmm")}`,
    "-C", `cmake.define.CMAKE_CXX_COMPILER=${compiler}`, "-C", `cmake.define.CMAKE_CXX_FLAGS=${flags}`,
    "-C", "cmake.build-type=RelWithDebInfo", "-C", "cmake.define.CMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1",
    "-C", `build-dir=${resolve(buildDir, "python-build")}`, join("..", "python")], { env });
  // CPython keeps objects alive until exit by design: leak reports would be noise here.
  // --capture=sys: a sanitizer report is written to file descriptor 2 and the process aborts, so
  // pytest's default descriptor capture would swallow it. -rP repeats what the stress tests
  // print (threads, processes, multiplies).
  run("python", ["-m", "pytest", join("..", "python", "tests"), "-q", "-rP", "--capture=sys",
    "-p", "no:cacheprovider"], {
    env: { ...sanitizerEnv, PYTHONPATH: target, LD_PRELOAD: runtimes.join(" "),
      ASAN_OPTIONS: "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1",
      UBSAN_OPTIONS: "print_stacktrace=1:halt_on_error=1" },
  });
}

function main(): void {
  if (process.env.BSRMM_SANITIZE_STEP === "0") {
    console.log("reliability: SKIP sanitized build, ctest and fuzzing (BSRMM_SANITIZE_STEP=0)");
    return;
  }
  const started = Date.now();
  const durations: string[] = [];
  const timed = (step: string, work: () => void) => {
    const begin = Date.now();
    work();
    durations.push(`${step} ${((Date.now() - begin) / 1000).toFixed(0)} s`);
  };
  const fuzz = clangWithLibFuzzer();
  if (!fuzz) {
    console.log("reliability: clang++ with libFuzzer not found: sanitized tests with the system compiler, " +
      "fuzzing SKIPPED (Debian/Ubuntu: apt-get install clang libclang-rt-dev)");
  }
  timed("build", () => configureAndBuild(fuzz));
  timed("C++ tests", () => run("ctest", ["--test-dir", buildDir, "--output-on-failure", "-j",
    String(cmakeBuildJobs())], { env: sanitizerEnv }));
  const counts = testCounts();
  const results: FuzzResult[] = [];
  const seconds = fuzzSeconds();
  if (fuzz && seconds > 0) {
    timed("fuzzing", () => { for (const target of fuzzTargets) results.push(runFuzzer(target, seconds)); });
  } else if (fuzz) {
    console.log("reliability: fuzzing SKIPPED (BSRMM_FUZZ_SECONDS=0)");
  }
  const python = process.env.BSRMM_ASAN_PYTHON !== "0";
  if (python) {
    timed("Python extension + tests", pythonUnderSanitizers);
  } else {
    console.log("reliability: Python tests under ASan + UBSan SKIPPED (BSRMM_ASAN_PYTHON=0)");
  }
  for (const line of counts) console.log(`reliability: ${line}`);
  for (const r of results) {
    console.log(`reliability: fuzz ${r.target}: ${r.executions} executions in ${r.seconds.toFixed(0)} s ` +
      `(${(r.executions / r.seconds).toFixed(0)}/s), corpus ${r.corpus} inputs, no failure`);
  }
  console.log(`reliability: sanitized build, C++ tests${results.length ? ", fuzzing" : ""}` +
    `${python ? " and Python tests" : ""} passed in ${((Date.now() - started) / 1000).toFixed(0)} s ` +
    `(${durations.join(", ")})`);
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
