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

test("packages are named @bsrmm/<folder> (or their public name): turbo's --filter and task names use these", () => {
  for (const dir of readdirSync(join(repoRoot, "packages"))) {
    const manifestPath = join(repoRoot, "packages", dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
    assert.equal(manifest.name, publishedNames[dir] ?? `@bsrmm/${dir}`, `packages/${dir}/package.json`);
  }
});

interface TurboConfig {
  extends?: string[];
  tasks?: Record<string, unknown>;
}

test("a package's own task settings live in its turbo.json, which extends the root's", () => {
  const root = JSON.parse(read("turbo.json")) as TurboConfig;
  for (const key of Object.keys(root.tasks ?? {})) {
    assert.ok(!key.includes("#"), `turbo.json task ${key}: belongs in that package's turbo.json`);
  }
  const dirs = ["tools", ...readdirSync(join(repoRoot, "packages")).map((d) => join("packages", d))];
  for (const dir of dirs) {
    const configPath = join(repoRoot, dir, "turbo.json");
    if (!existsSync(configPath)) continue;
    assert.ok(existsSync(join(repoRoot, dir, "package.json")), `${dir}/turbo.json: no package.json beside it`);
    const config = JSON.parse(readFileSync(configPath, "utf8")) as TurboConfig;
    assert.deepEqual(config.extends, ["//"], `${dir}/turbo.json extends the root`);
    for (const key of Object.keys(config.tasks ?? {})) {
      assert.ok(!key.includes("#"), `${dir}/turbo.json task ${key}: a package's own tasks are named without a package`);
    }
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
