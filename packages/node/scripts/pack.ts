// Packs the npm tarballs the napi per-platform layout publishes: `bsrmm` (TypeScript layer and
// loader, with the platform packages as optionalDependencies) and `bsrmm-linux-x64-gnu` (the
// addon binary). Usage: tsx scripts/pack.ts <output dir>
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = join(import.meta.dirname, "..");
const out = resolve(process.argv[2] ?? join(root, ".pack"));
mkdirSync(out, { recursive: true });

interface Manifest {
  name: string;
  version: string;
  files?: string[];
  scripts?: unknown;
  devDependencies?: unknown;
  optionalDependencies?: Record<string, string>;
}
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Manifest;
const platforms = ["linux-x64-gnu"];
// npm ships a package's LICENSE whatever `files` says; the one text lives at the repository root.
const license = join(root, "..", "..", "LICENSE");

function pack(dir: string): string {
  const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], { cwd: dir, encoding: "utf8" }).trim();
  return join(out, name.split("\n").pop() ?? name);
}

const tarballs: string[] = [];
for (const platform of platforms) {
  const binary = join(root, "native", `bsrmm.${platform}.node`);
  if (!existsSync(binary)) throw new Error(`pack: ${binary} is missing: run \`pnpm run build\` first`);
  const stage = mkdtempSync(join(tmpdir(), `bsrmm-${platform}-`));
  cpSync(join(root, "npm", platform), stage, { recursive: true });
  cpSync(binary, join(stage, `bsrmm.${platform}.node`));
  cpSync(license, join(stage, "LICENSE"));
  tarballs.push(pack(stage));
}

// The main package: what `files` lists, and the manifest as `napi pre-publish` would leave it.
const stage = mkdtempSync(join(tmpdir(), "bsrmm-main-"));
for (const entry of [...(manifest.files ?? []), "README.md"]) cpSync(join(root, entry), join(stage, entry), { recursive: true });
cpSync(license, join(stage, "LICENSE"));
const published: Manifest = { ...manifest, optionalDependencies: Object.fromEntries(platforms.map((p) => [`bsrmm-${p}`, manifest.version])) };
delete published.scripts;
delete published.devDependencies;
writeFileSync(join(stage, "package.json"), JSON.stringify(published, null, 2) + "\n");
tarballs.unshift(pack(stage));

for (const tarball of tarballs) console.log(tarball);
