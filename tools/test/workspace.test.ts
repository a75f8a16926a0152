// Pins that must agree across files, and package scripts that must point at real tools.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../toolchain/layout.ts";
import { pinnedPnpmVersion } from "../toolchain/node-deps.ts";

interface Manifest {
  name?: string;
  scripts?: Record<string, string>;
}

const read = (file: string): string => readFileSync(join(repoRoot, file), "utf8");
const rootManifest = JSON.parse(read("package.json")) as Manifest;

function catalogVersion(name: string): string | undefined {
  return new RegExp(`^\\s+"?${name}"?:\\s*(\\S+)`, "m").exec(read("pnpm-workspace.yaml"))?.[1];
}

test("the tsx that root scripts fetch with npx is the catalog's tsx", () => {
  const tsx = catalogVersion("tsx");
  assert.ok(tsx !== undefined, "pnpm-workspace.yaml catalog has tsx");
  for (const [name, script] of Object.entries(rootManifest.scripts ?? {})) {
    for (const match of script.matchAll(/tsx@(\S+)/g)) assert.equal(match[1], tsx, `root script ${name}`);
  }
});

// packages/node is what npm users install, so it carries the public name.
const publishedNames: Record<string, string> = { node: "bsrmm" };

test("packages are named @bsrmm/<folder> (or their public name): turbo.json's per-package tasks use these", () => {
  for (const dir of readdirSync(join(repoRoot, "packages"))) {
    const manifestPath = join(repoRoot, "packages", dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
    assert.equal(manifest.name, publishedNames[dir] ?? `@bsrmm/${dir}`, `packages/${dir}/package.json`);
  }
});

test("every package-specific task in turbo.json names a package this convention produces", () => {
  const turbo = JSON.parse(read("turbo.json")) as { tasks: Record<string, unknown> };
  const known = new Set(["@bsrmm/tools", ...readdirSync(join(repoRoot, "packages"))
    .map((dir) => publishedNames[dir] ?? `@bsrmm/${dir}`)]);
  for (const key of Object.keys(turbo.tasks)) {
    const pkg = key.includes("#") ? key.slice(0, key.lastIndexOf("#")) : undefined;
    if (pkg !== undefined) assert.ok(known.has(pkg), `turbo.json task ${key}: no package ${pkg}`);
  }
});

test("pnpm is pinned to an exact version", () => {
  assert.match(pinnedPnpmVersion(), /^\d+\.\d+\.\d+$/);
});

test("every package script that runs a tools/ file names one that exists", () => {
  const dirs = ["tools", ...readdirSync(join(repoRoot, "packages")).map((d) => join("packages", d))];
  for (const dir of dirs) {
    const manifestPath = join(repoRoot, dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
    for (const [name, script] of Object.entries(manifest.scripts ?? {})) {
      for (const match of script.matchAll(/(\S*tools\/[\w./-]+\.ts)/g)) {
        const file = resolve(repoRoot, dir, match[1] ?? "");
        assert.ok(existsSync(file), `${dir}/package.json script "${name}" runs missing ${file}`);
      }
    }
  }
});
