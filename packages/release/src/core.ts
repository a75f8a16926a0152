// The installed core every artifact links: packages/core-cuda/build/install, which the
// workspace's build leaves there, so no artifact compiles the CUDA core a second time.
// BSRMM_CORE_PREFIX points elsewhere (another install of the same sources).
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const repoRoot = resolve(import.meta.dirname, "..", "..", "..");

export interface InstalledCore {
  prefix: string;
  /** Whether the core was built with its CUDA backend (sm_90a + sm_80 code and compute_80 PTX). */
  cuda: boolean;
  /** True when BSRMM_CORE_PREFIX chose it rather than the workspace's own build. */
  overridden: boolean;
}

export function installedCore(env: NodeJS.ProcessEnv = process.env): InstalledCore {
  const override = env.BSRMM_CORE_PREFIX;
  const prefix = resolve(override ?? join(repoRoot, "packages", "core-cuda", "build", "install"));
  const config = join(prefix, "lib", "cmake", "bsrmm", "bsrmmConfig.cmake");
  if (!existsSync(config)) {
    throw new Error(`no installed core at ${prefix} (${config} is missing): build it first ` +
      "(pnpm --filter @bsrmm/core-cuda build) or point BSRMM_CORE_PREFIX at an install of packages/core-cuda");
  }
  const cuda = /^set\(bsrmm_WITH_CUDA ON\)/m.test(readFileSync(config, "utf8"));
  return { prefix, cuda, overridden: override !== undefined };
}

/** The version every package states (tools/sync-versions.ts keeps them equal). */
export function releaseVersion(): string {
  const manifest = JSON.parse(readFileSync(join(repoRoot, "packages", "release", "package.json"), "utf8")) as { version: string };
  return manifest.version;
}
