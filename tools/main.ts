// The root commands (package.json scripts; the README and CI call these):
//   npm run bench  ->  tsx tools/main.ts bench   bootstrap, build, the benchmark's quick suite
//   npm test       ->  tsx tools/main.ts test    bootstrap, build, every package's tests
// Also `build` and `bootstrap`. Arguments after the command go to `turbo run`
// (e.g. `npm test -- --force` re-runs tests whose results are cached).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "./toolchain/bootstrap.ts";
import { toolchainEnv } from "./toolchain/env.ts";
import { repoRoot } from "./toolchain/layout.ts";
import { machineFingerprint } from "./toolchain/machine.ts";
import { CommandError, run } from "./toolchain/run.ts";

function usage(): never {
  console.error("usage: tsx tools/main.ts <bootstrap|build|test|bench> [turbo run options...]");
  process.exit(2);
}

function requireBenchScript(): void {
  const manifest = join(repoRoot, "packages", "bench", "package.json");
  const scripts = existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, "utf8")) as { scripts?: Record<string, string> }).scripts
    : undefined;
  if (scripts?.bench === undefined) throw new Error("packages/bench has no `bench` script yet: nothing to run");
}

function turboRun(task: string, extra: string[]): void {
  // Tests tune (the default mode is auto) into a cache of their own run, never the user's
  // ~/.cache/bsrmm/tuning.json; a BSRMM_TUNING_CACHE the caller set still wins.
  const cacheDir = task === "test" && process.env.BSRMM_TUNING_CACHE === undefined
    ? mkdtempSync(join(tmpdir(), "bsrmm-test-tuning-"))
    : undefined;
  const env = toolchainEnv({
    ...process.env,
    ...(cacheDir === undefined ? {} : { BSRMM_TUNING_CACHE: join(cacheDir, "tuning.json") }),
    BSRMM_MACHINE: machineFingerprint(),
    TURBO_TELEMETRY_DISABLED: "1",
  });
  console.log(`main: machine: ${env.BSRMM_MACHINE}`);
  // Native builds already use every core they are given (-j); running half as many tasks at once
  // keeps a 2-core machine from thrashing while still overlapping tests on larger ones.
  const concurrency = extra.some((a) => a.startsWith("--concurrency"))
    ? []
    : [`--concurrency=${Math.max(1, Math.floor(availableParallelism() / 2))}`];
  const turbo = join(repoRoot, "node_modules", ".bin", process.platform === "win32" ? "turbo.cmd" : "turbo");
  // grouped: each runner's summary (ctest, pytest, cargo, node:test) stays in one piece; except
  // for bench, whose per-case progress must reach the terminal as it happens (one package runs).
  // dependencies-successful: one failing package does not hide the other packages' results;
  // turbo still exits non-zero.
  const logOrder = task === "bench" ? "--log-order=stream" : "--log-order=grouped";
  try {
    run(turbo, ["run", task, ...concurrency, logOrder, "--continue=dependencies-successful",
      ...extra], { cwd: repoRoot, env });
  } finally {
    if (cacheDir !== undefined) rmSync(cacheDir, { recursive: true, force: true });
  }
}

function main(argv: string[]): void {
  const [command, ...extra] = argv;
  if (command === "bootstrap") {
    bootstrap();
    return;
  }
  if (command !== "build" && command !== "test" && command !== "bench") usage();
  if (command === "bench") requireBenchScript();
  bootstrap();
  // bench builds only what the benchmark uses (its package and the ones it depends on).
  turboRun(command, command === "bench" ? ["--filter=@bsrmm/bench", ...extra] : extra);
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(`main: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof CommandError ? error.exitCode : 1);
}
