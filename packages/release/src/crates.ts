// The crates: `cargo package` of bsrmm-sys (with the core's CMake project inside, through its
// core-cuda link), bsrmm and burn-bsrmm, packaged together so each finds the others' new
// versions; then, on request, a smoke test of the packaged sources outside the workspace.
//   tsx src/crates.ts <out dir> [--smoke] [--allow-dirty]   (under tools/with-toolchain.ts)
//
// Packaging skips cargo's verify build: for bsrmm-sys and bsrmm the smoke test below is that
// build (from the unpacked .crate files, against the installed core), and for burn-bsrmm it
// would compile Burn, about 40 minutes on two cores. The release workflow packages with verify.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { installedCore, repoRoot } from "./core.ts";
import { output, run } from "./run.ts";

export const crateNames = ["bsrmm-sys", "bsrmm", "burn-bsrmm"] as const;
const rustDir = join(repoRoot, "packages", "rust-burn");
const coreDir = join(repoRoot, "packages", "core-cuda");
/** What bsrmm-sys/Cargo.toml includes of the core: enough to build it, nothing else. */
const coreParts = ["CMakeLists.txt", "cmake", "include", "src"];

export interface PackagedCrates {
  version: string;
  /** Crate name -> its .crate file in the output dir. */
  files: Record<string, string>;
}

function cargoVersion(): string {
  const metadata = JSON.parse(output("cargo", ["metadata", "--no-deps", "--format-version", "1"], { cwd: rustDir })) as {
    packages: { name: string; version: string }[];
  };
  const versions = new Set(metadata.packages.filter((p) => (crateNames as readonly string[]).includes(p.name)).map((p) => p.version));
  if (versions.size !== 1) throw new Error(`the crates disagree on their version: ${[...versions].join(", ")}`);
  return [...versions][0] ?? "";
}

export function packageCrates(outDir: string, options: { allowDirty: boolean }): PackagedCrates {
  const version = cargoVersion();
  run("cargo", ["package", ...crateNames.flatMap((c) => ["-p", c]), "--no-verify",
    ...(options.allowDirty ? ["--allow-dirty"] : [])], { cwd: rustDir });
  mkdirSync(outDir, { recursive: true });
  const files: Record<string, string> = {};
  for (const name of crateNames) {
    const file = `${name}-${version}.crate`;
    copyFileSync(join(rustDir, "target", "package", file), join(outDir, file));
    files[name] = join(outDir, file);
  }
  return { version, files };
}

function filesUnder(root: string, rel: string): string[] {
  const path = join(root, rel);
  if (!statSync(path).isDirectory()) return [rel];
  return readdirSync(path).sort().flatMap((entry) => filesUnder(root, join(rel, entry)));
}

/** Unpacks every .crate into `dir` and returns crate name -> its unpacked directory. */
function unpack(crates: PackagedCrates, dir: string): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const dirs: Record<string, string> = {};
  for (const [name, file] of Object.entries(crates.files)) {
    run("tar", ["-xzf", file, "-C", dir]);
    dirs[name] = join(dir, `${name}-${crates.version}`);
  }
  return dirs;
}

/** bsrmm-sys must carry every file of the core's CMake project, and CMake must accept it. */
function checkVendoredCore(sysDir: string, scratch: string): void {
  const vendored = join(sysDir, "core-cuda");
  const missing = coreParts.flatMap((part) => filesUnder(coreDir, part))
    .filter((file) => !existsSync(join(vendored, file)));
  if (missing.length > 0) throw new Error(`bsrmm-sys's package lacks core files: ${missing.join(", ")}`);
  // Configuring checks that every source the CMake project lists is there (the build itself is
  // the release workflow's verify step: minutes, not seconds).
  run("cmake", ["-S", vendored, "-B", join(scratch, "core-configure"), "-DBSRMM_CUDA=OFF", "-DBSRMM_BUILD_TESTS=OFF"]);
  console.log(`crates: bsrmm-sys carries the core (${relative(sysDir, vendored)}: ${coreParts.join(", ")}) and it configures`);
}

/** A new cargo project in a temp dir, on `bsrmm` and `bsrmm-sys` as packaged, runs a multiply. */
export function smokeTestCrates(crates: PackagedCrates, env: NodeJS.ProcessEnv = process.env): void {
  const core = installedCore(env);
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-crates-smoke-"));
  try {
    const unpacked = unpack(crates, join(dir, "crates"));
    checkVendoredCore(unpacked["bsrmm-sys"] ?? "", dir);
    const project = join(dir, "smoke");
    mkdirSync(join(project, "src"), { recursive: true });
    copyFileSync(join(import.meta.dirname, "smoke-crate", "src", "main.rs"), join(project, "src", "main.rs"));
    // The packaged manifests ask crates.io for their siblings; [patch] serves them from the
    // unpacked packages instead, as the registry will once they are published.
    writeFileSync(join(project, "Cargo.toml"), [
      "[package]", 'name = "bsrmm-smoke"', 'version = "0.0.0"', 'edition = "2024"', "publish = false", "",
      "[dependencies]", `bsrmm = "=${crates.version}"`, "",
      "[patch.crates-io]",
      `bsrmm = { path = ${JSON.stringify(unpacked.bsrmm)} }`,
      `bsrmm-sys = { path = ${JSON.stringify(unpacked["bsrmm-sys"])} }`, ""].join("\n"));
    // The workspace's lockfile pins the same third-party versions the crates were tested with.
    copyFileSync(join(rustDir, "Cargo.lock"), join(project, "Cargo.lock"));
    const cargoEnv = { ...env, BSRMM_CORE_PREFIX: core.prefix,
      // A target dir that outlives the temp project, so a second run recompiles only bsrmm.
      CARGO_TARGET_DIR: env.CARGO_TARGET_DIR ?? join(repoRoot, "packages", "release", "target") };
    run("cargo", ["run", "--quiet", "--", crates.version], { cwd: project, env: cargoEnv });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [out, ...flags] = process.argv.slice(2);
  if (out === undefined || flags.some((f) => f !== "--smoke" && f !== "--allow-dirty")) {
    console.error("usage: tsx src/crates.ts <out dir> [--smoke] [--allow-dirty]");
    process.exit(2);
  }
  try {
    const crates = packageCrates(resolve(out), { allowDirty: flags.includes("--allow-dirty") });
    if (flags.includes("--smoke")) smokeTestCrates(crates);
    for (const file of Object.values(crates.files)) console.log(file);
  } catch (error) {
    console.error(`crates: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
