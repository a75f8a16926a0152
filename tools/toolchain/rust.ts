// The Rust toolchain (cargo) the Rust crates and the Node addon build with. It comes from rustup,
// not from a package registry, so the bootstrap checks it and says what to do instead of installing.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./layout.ts";
import { probe } from "./run.ts";

/** `rust-version` of the Cargo workspace, e.g. "1.95", or undefined when there is none. */
export function requiredRustVersion(): string | undefined {
  const manifest = join(repoRoot, "packages", "rust-burn", "Cargo.toml");
  if (!existsSync(manifest)) return undefined;
  return /^\s*rust-version\s*=\s*"([\d.]+)"/m.exec(readFileSync(manifest, "utf8"))?.[1];
}

/** True when `have` (e.g. "1.95.0") is at least `need` (e.g. "1.95"), comparing numerically. */
export function versionAtLeast(have: string, need: string): boolean {
  const a = have.split(".").map(Number);
  const b = need.split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

export function checkRust(): void {
  const need = requiredRustVersion();
  if (need === undefined) return;
  const version = /cargo (\d+\.\d+\.\d+)/.exec(probe("cargo", ["--version"]) ?? "")?.[1];
  const fix = `install Rust >= ${need} with rustup (https://rustup.rs), or run \`rustup update\``;
  if (version === undefined) throw new Error(`cargo not found: the Rust crates and the Node addon need it; ${fix}`);
  if (!versionAtLeast(version, need)) throw new Error(`cargo ${version} is older than the crates' rust-version ${need}; ${fix}`);
  console.log(`bootstrap: cargo ${version} (Rust crates need >= ${need})`);
}
