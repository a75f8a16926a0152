// The release flow's versioning: `changeset version` (the fixed group) then sync-versions must
// leave one version in every manifest. Run on a copy of the repository's own manifests.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../toolchain/layout.ts";
import { syncVersions, versionSites, workspacePackageDirs } from "../sync-versions.ts";

test("every manifest in the repository states the workspace's version", () => {
  const { version, stale } = syncVersions(repoRoot, { check: true });
  assert.deepEqual(stale, [], `run tsx tools/sync-versions.ts: these files do not state ${version}`);
});

/** The files `changeset version` and sync-versions read or write, copied into `dir`. */
function copyManifests(dir: string): string[] {
  const packageDirs = workspacePackageDirs(repoRoot);
  const files = ["package.json", "pnpm-workspace.yaml", ".changeset/config.json",
    ...packageDirs.flatMap((d) => [`${d}/package.json`, `${d}/CHANGELOG.md`]),
    ...versionSites(repoRoot).map((site) => site.file)];
  for (const file of new Set(files)) {
    if (!existsSync(join(repoRoot, file))) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(repoRoot, file), join(dir, file));
  }
  // changesets resolves its changelog generator from the copy's node_modules.
  symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"));
  return packageDirs;
}

const bump = (version: string) => {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return `${major}.${minor + 1}.0`;
};

test("changeset version, then sync-versions: every package and manifest at the next minor version", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-versions-"));
  try {
    const packageDirs = copyManifests(dir);
    const before = syncVersions(dir, { check: true }).version;
    const next = bump(before);
    // One package named: the fixed group must carry all the others along.
    writeFileSync(join(dir, ".changeset", "test-bump.md"), '---\n"@bsrmm/core-cuda": minor\n---\n\nA test change.\n');
    execFileSync(join(repoRoot, "node_modules", ".bin", "changeset"), ["version"], { cwd: dir, stdio: "pipe" });

    for (const pkg of packageDirs) {
      const manifest = JSON.parse(readFileSync(join(dir, pkg, "package.json"), "utf8")) as { name: string; version: string };
      assert.equal(manifest.version, next, `${pkg}/package.json after changeset version`);
      const changelog = readFileSync(join(dir, pkg, "CHANGELOG.md"), "utf8");
      assert.match(changelog, new RegExp(`^# ${manifest.name}\\n\\n## ${next.replace(/\./g, "\\.")}\\n`), `${pkg}/CHANGELOG.md`);
    }
    assert.match(readFileSync(join(dir, "packages/core-cuda/CHANGELOG.md"), "utf8"), /- A test change\./);
    assert.deepEqual(readdirSync(join(dir, ".changeset")).filter((f) => f.endsWith(".md")), [], "changesets consumed");

    const synced = syncVersions(dir, { check: false });
    assert.equal(synced.version, next);
    assert.ok(synced.stale.length > 0, "sync-versions had files to update");
    // Read back with patterns independent of sync-versions' own readers.
    const read = (file: string) => readFileSync(join(dir, file), "utf8");
    const v = next.replace(/\./g, "\\.");
    assert.match(read("package.json"), new RegExp(`"version": "${v}"`));
    assert.match(read("packages/node/npm/linux-x64-gnu/package.json"), new RegExp(`"version": "${v}"`));
    const cargo = read("packages/rust-burn/Cargo.toml");
    assert.match(cargo, new RegExp(`\\[workspace\\.package\\]\\nversion = "${v}"`));
    for (const crate of ["bsrmm-sys", "bsrmm", "burn-bsrmm"]) {
      assert.match(cargo, new RegExp(`^${crate} = \\{ path = "${crate}", version = "${v}" \\}`, "m"), `${crate} path dependency`);
    }
    for (const crate of ["bsrmm-sys", "bsrmm", "burn-bsrmm", "bsrmm-node"]) {
      assert.match(read("packages/rust-burn/Cargo.lock"), new RegExp(`name = "${crate}"\\nversion = "${v}"\\n`), `Cargo.lock ${crate}`);
    }
    for (const pyproject of ["packages/python/pyproject.toml", "packages/bench/pyproject.toml"]) {
      assert.match(read(pyproject), new RegExp(`^version = "${v}"$`, "m"), pyproject);
    }
    assert.match(read("packages/core-cuda/CMakeLists.txt"), new RegExp(`^project\\(bsrmm VERSION ${v} `, "m"));
    const [major, minor, patch] = next.split(".");
    const header = read("packages/core-cuda/include/bsrmm/bsrmm.h");
    assert.match(header, new RegExp(`#define BSRMM_VERSION_MAJOR ${major}\\n#define BSRMM_VERSION_MINOR ${minor}\\n#define BSRMM_VERSION_PATCH ${patch}\\n`));
    assert.deepEqual(syncVersions(dir, { check: true }).stale, [], "a second sync changes nothing");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sync-versions refuses packages that disagree, naming them", () => {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-versions-"));
  try {
    copyManifests(dir);
    const file = join(dir, "packages/python/package.json");
    writeFileSync(file, readFileSync(file, "utf8").replace(/"version": "[^"]*"/, '"version": "9.9.9"'));
    assert.throws(() => syncVersions(dir, { check: true }), /packages\/python\/package\.json 9\.9\.9/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
