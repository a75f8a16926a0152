// A throwaway .toolchain/ look-alike (empty files where the venv python and nvcc would be), so the
// tests exercise the real layout logic without installing anything.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { toolchainLayout, type ToolchainLayout } from "../toolchain/layout.ts";

export interface FakeToolchain {
  layout: ToolchainLayout;
  env: NodeJS.ProcessEnv;
  remove: () => void;
}

export function fakeToolchain(parts: { venv?: boolean; cuda?: boolean } = {}): FakeToolchain {
  const root = mkdtempSync(join(tmpdir(), "bsrmm-toolchain-"));
  const env: NodeJS.ProcessEnv = { PATH: "/usr/bin:/bin", BSRMM_TOOLCHAIN: root };
  const layout = toolchainLayout(env);
  const touch = (file: string): void => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, "");
  };
  if (parts.venv === true) touch(layout.venvPython);
  if (parts.cuda === true) touch(layout.nvcc);
  return { layout, env, remove: () => rmSync(root, { recursive: true, force: true }) };
}
