// One version for everything: changesets' "fixed" group moves every workspace package.json
// together (`changeset version`); this step then writes that version into the manifests
// changesets does not know: Cargo, Python, CMake, the C header, the npm platform packages and
// the root package.json. `pnpm run version-packages` runs both.
//   tsx tools/sync-versions.ts            write the version everywhere
//   tsx tools/sync-versions.ts --check    exit 1, listing each file that disagrees
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./toolchain/layout.ts";

/** A file that states the version, and how to read and rewrite it there. */
export interface VersionSite {
  file: string;
  /** Every version the file states (one per site in it); throws if the file lost its shape. */
  read(text: string): string[];
  write(text: string, version: string): string;
}

// Cargo, PEP 440 and CMake spell prereleases differently and the C header has three integers:
// one plain x.y.z keeps every manifest able to say the same thing.
const PLAIN_VERSION = /^\d+\.\d+\.\d+$/;

function mustMatch(file: string, what: string, found: RegExpExecArray | null): RegExpExecArray {
  if (found === null) throw new Error(`sync-versions: ${file}: cannot find ${what}`);
  return found;
}

/** The top-level "version" of a package.json (two-space indent), edited in place to keep its layout. */
function jsonManifest(file: string): VersionSite {
  const pattern = /^( {2}"version": ")([^"]*)(")/m;
  return {
    file,
    read: (text) => [mustMatch(file, 'a top-level "version"', pattern.exec(text))[2] ?? ""],
    write: (text, version) => text.replace(pattern, `$1${version}$3`),
  };
}

/** The lines of one TOML table: from its header to the next header. */
function tomlTable(file: string, text: string, table: string): { start: number; end: number } {
  const header = mustMatch(file, `the table [${table}]`,
    new RegExp(`^\\[${table.replace(/\./g, "\\.")}\\][ \\t]*$`, "m").exec(text));
  const start = header.index + header[0].length;
  const next = /^\[/m.exec(text.slice(start));
  return { start, end: next === null ? text.length : start + next.index };
}

/** `version = "..."` directly in a TOML table ([package], [project], [workspace.package]). */
function tomlVersion(file: string, table: string): VersionSite {
  const key = /^(version\s*=\s*")([^"]*)(")/m;
  return {
    file,
    read: (text) => {
      const { start, end } = tomlTable(file, text, table);
      return [mustMatch(file, `version = "..." in [${table}]`, key.exec(text.slice(start, end)))[2] ?? ""];
    },
    write: (text, version) => {
      const { start, end } = tomlTable(file, text, table);
      return text.slice(0, start) + text.slice(start, end).replace(key, `$1${version}$3`) + text.slice(end);
    },
  };
}

/** The `version` of every path dependency in [workspace.dependencies]: what a published crate
 * asks of its siblings on crates.io. */
function cargoPathDependencies(file: string): VersionSite {
  const entry = /^([\w-]+\s*=\s*\{[^}\n]*\bpath\s*=[^}\n]*\bversion\s*=\s*")([^"]*)(")/gm;
  return {
    file,
    read: (text) => {
      const { start, end } = tomlTable(file, text, "workspace.dependencies");
      const versions = [...text.slice(start, end).matchAll(entry)].map((m) => m[2] ?? "");
      if (versions.length === 0) throw new Error(`sync-versions: ${file}: no path dependency with a version in [workspace.dependencies]`);
      return versions;
    },
    write: (text, version) => {
      const { start, end } = tomlTable(file, text, "workspace.dependencies");
      return text.slice(0, start) + text.slice(start, end).replace(entry, `$1${version}$3`) + text.slice(end);
    },
  };
}

/** Cargo.lock's entries for the workspace's own crates: the ones without a `source`. */
function cargoLock(file: string): VersionSite {
  const block = /(\[\[package\]\]\nname = "[^"]+"\nversion = ")([^"]*)("\n)(?!source = )/g;
  return {
    file,
    read: (text) => {
      const versions = [...text.matchAll(block)].map((m) => m[2] ?? "");
      if (versions.length === 0) throw new Error(`sync-versions: ${file}: no workspace crate (a [[package]] without source)`);
      return versions;
    },
    write: (text, version) => text.replace(block, `$1${version}$3`),
  };
}

function cmakeProject(file: string): VersionSite {
  const pattern = /(^project\(\w+ VERSION )(\d+\.\d+\.\d+)/m;
  return {
    file,
    read: (text) => [mustMatch(file, "project(<name> VERSION x.y.z", pattern.exec(text))[2] ?? ""],
    write: (text, version) => text.replace(pattern, `$1${version}`),
  };
}

/** BSRMM_VERSION_MAJOR / _MINOR / _PATCH: what bsrmm_version() returns. */
function cHeaderMacros(file: string): VersionSite {
  const parts = ["MAJOR", "MINOR", "PATCH"] as const;
  const macro = (part: string) => new RegExp(`(^#define BSRMM_VERSION_${part} )(\\d+)`, "m");
  return {
    file,
    read: (text) => [parts.map((part) => mustMatch(file, `#define BSRMM_VERSION_${part}`, macro(part).exec(text))[2]).join(".")],
    write: (text, version) => {
      const numbers = version.split(".");
      return parts.reduce((out, part, i) => out.replace(macro(part), `$1${numbers[i]}`), text);
    },
  };
}

/** Folders of the pnpm workspace (pnpm-workspace.yaml's `packages:` list, `dir/*` expanded). */
export function workspacePackageDirs(root: string): string[] {
  const yaml = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8");
  const list = mustMatch("pnpm-workspace.yaml", "a packages: list", /^packages:\n((?:\s+- .+\n)+)/m.exec(yaml))[1] ?? "";
  return list.split("\n").map((line) => line.replace(/^\s+- /, "").trim()).filter(Boolean).flatMap((entry) => {
    if (!entry.endsWith("/*")) return [entry];
    const parent = entry.slice(0, -2);
    return readdirSync(join(root, parent), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, parent, d.name, "package.json")))
      .map((d) => `${parent}/${d.name}`)
      .sort();
  });
}

/** The version changesets gave the fixed group: every workspace package.json must agree. */
export function workspaceVersion(root: string): string {
  const versions = new Map<string, string>();
  for (const dir of workspacePackageDirs(root)) {
    const file = `${dir}/package.json`;
    versions.set(file, jsonManifest(file).read(readFileSync(join(root, file), "utf8"))[0] ?? "");
  }
  const distinct = new Set(versions.values());
  if (distinct.size !== 1) {
    const listing = [...versions].map(([file, v]) => `${file} ${v}`).join(", ");
    throw new Error(`sync-versions: the workspace packages disagree (${listing}); .changeset/config.json's ` +
      `"fixed" group must hold every package`);
  }
  const [version = ""] = distinct;
  if (!PLAIN_VERSION.test(version)) {
    throw new Error(`sync-versions: version ${version} is not x.y.z (Cargo, PEP 440, CMake and bsrmm.h ` +
      `cannot all state a prerelease): leave changesets' pre mode before versioning`);
  }
  return version;
}

/** Every place outside the workspace package.json files that states the version. */
export function versionSites(root: string): VersionSite[] {
  const platformDir = "packages/node/npm";
  const platforms = existsSync(join(root, platformDir)) ? readdirSync(join(root, platformDir)).sort() : [];
  // A pyproject.toml without [project] (tool settings only) names no distribution to version.
  const pyprojects = workspacePackageDirs(root).map((dir) => `${dir}/pyproject.toml`)
    .filter((file) => existsSync(join(root, file)) && /^\[project\]/m.test(readFileSync(join(root, file), "utf8")));
  return [
    jsonManifest("package.json"),
    ...platforms.map((p) => jsonManifest(`${platformDir}/${p}/package.json`)),
    tomlVersion("packages/rust-burn/Cargo.toml", "workspace.package"),
    cargoPathDependencies("packages/rust-burn/Cargo.toml"),
    cargoLock("packages/rust-burn/Cargo.lock"),
    ...pyprojects.map((file) => tomlVersion(file, "project")),
    cmakeProject("packages/core-cuda/CMakeLists.txt"),
    cHeaderMacros("packages/core-cuda/include/bsrmm/bsrmm.h"),
  ];
}

/** Files whose version differs from the workspace's; rewritten unless `check`. */
export function syncVersions(root: string, options: { check: boolean }): { version: string; stale: string[] } {
  const version = workspaceVersion(root);
  const texts = new Map<string, string>();
  const stale = new Set<string>();
  for (const site of versionSites(root)) {
    const text = texts.get(site.file) ?? readFileSync(join(root, site.file), "utf8");
    if (site.read(text).some((v) => v !== version)) stale.add(site.file);
    texts.set(site.file, site.write(text, version));
  }
  if (!options.check) for (const file of stale) writeFileSync(join(root, file), texts.get(file) ?? "");
  return { version, stale: [...stale] };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const check = process.argv.includes("--check");
  try {
    const { version, stale } = syncVersions(repoRoot, { check });
    if (check && stale.length > 0) {
      console.error(`sync-versions: these files do not state ${version}: ${stale.join(", ")} ` +
        "(run: pnpm run version-packages, or tsx tools/sync-versions.ts)");
      process.exit(1);
    }
    console.log(stale.length === 0 ? `sync-versions: every manifest states ${version}`
      : `sync-versions: wrote ${version} into ${stale.join(", ")}`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
