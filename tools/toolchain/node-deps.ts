// Node side of the toolchain: the pinned pnpm (from the root package.json's "packageManager")
// and the workspace's node_modules (tsx, turbo, typescript, each package's own dependencies).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, type ToolchainLayout } from "./layout.ts";
import { probe, run } from "./run.ts";
import { hashOf, Stamp } from "./stamp.ts";

export function pinnedPnpmVersion(): string {
  const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { packageManager?: string };
  const match = /^pnpm@(\d+\.\d+\.\d+)/.exec(manifest.packageManager ?? "");
  if (match?.[1] === undefined) throw new Error('root package.json needs "packageManager": "pnpm@<x.y.z>"');
  return match[1];
}

/** The pnpm to use: one on PATH if it is exactly the pinned version, else a project-local install. */
export function ensurePnpm(layout: ToolchainLayout): string {
  const version = pinnedPnpmVersion();
  if (probe("pnpm", ["--version"]) === version) {
    console.log(`bootstrap: pnpm ${version} (on PATH)`);
    return "pnpm";
  }
  const local = join(layout.nodeToolsBin, process.platform === "win32" ? "pnpm.cmd" : "pnpm");
  const stamp = new Stamp(layout.stampDir, "pnpm");
  if (stamp.matches(hashOf([version])) && existsSync(local)) {
    console.log(`bootstrap: pnpm ${version} (project-local) up to date`);
    return local;
  }
  console.log(`bootstrap: installing pnpm ${version} into ${layout.nodeTools}`);
  run("npm", ["install", "--prefix", layout.nodeTools, "--no-save", "--no-package-lock", "--no-audit",
    "--no-fund", `pnpm@${version}`]);
  stamp.record(hashOf([version]));
  return local;
}

/** Everything that decides what `pnpm install` produces; hashed after the install (it may rewrite the lockfile). */
function workspaceManifests(): string[] {
  const files = ["package.json", "pnpm-workspace.yaml", "pnpm-lock.yaml", join("tools", "package.json")];
  const packagesDir = join(repoRoot, "packages");
  if (existsSync(packagesDir)) {
    for (const name of readdirSync(packagesDir).sort()) files.push(join("packages", name, "package.json"));
  }
  return files.flatMap((file) => {
    const path = join(repoRoot, file);
    return existsSync(path) ? [file, readFileSync(path, "utf8")] : [];
  });
}

export function ensureNodeDependencies(layout: ToolchainLayout, pnpm: string): void {
  const stamp = new Stamp(layout.stampDir, "node-modules");
  const installed = existsSync(join(repoRoot, "node_modules", ".modules.yaml"));
  if (installed && stamp.matches(hashOf([pnpm, ...workspaceManifests()]))) {
    console.log("bootstrap: node_modules up to date");
    return;
  }
  console.log("bootstrap: installing the workspace's node dependencies");
  // CI must build exactly the committed lockfile; a developer's install may update it.
  const frozen = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
  run(pnpm, ["install", frozen ? "--frozen-lockfile" : "--prefer-offline", "--config.confirmModulesPurge=false"],
    { cwd: repoRoot });
  stamp.record(hashOf([pnpm, ...workspaceManifests()]));
}
