// Builds the TypeScript layer twice (ESM in dist/esm, CommonJS in dist/cjs) beside a copy of
// the napi loader and typings (dist/native), which both outputs import as "../native/binding.cjs".
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const dist = join(root, "dist");
const nativeDir = join(root, "native");

if (!existsSync(join(nativeDir, "binding.cjs"))) {
  console.error("build-ts: native/binding.cjs is missing: run `pnpm run build:native` first");
  process.exit(1);
}
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "native"), { recursive: true });
// The .node binary is copied for local runs; the npm package ships it in bsrmm-<platform>.
for (const file of readdirSync(nativeDir)) {
  if (file === "binding.cjs" || file === "binding.d.cts" || file.endsWith(".node")) {
    cpSync(join(nativeDir, file), join(dist, "native", file));
  }
}

const tsc = join(root, "node_modules", ".bin", "tsc");
for (const project of ["tsconfig.json", "tsconfig.cjs.json"]) {
  const result = spawnSync(tsc, ["-p", join(root, project)], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
// dist/cjs holds CommonJS .js files inside a "type": "module" package.
writeFileSync(join(dist, "cjs", "package.json"), JSON.stringify({ type: "commonjs" }) + "\n");
console.log("build-ts: dist/esm, dist/cjs and dist/native written");
