// Bring the project-local toolchain up to date, idempotently: every part is skipped when its stamp
// says it already satisfies the pins, so a second run takes a second or two and uses no network.
import { ensureCuda } from "./cuda.ts";
import { toolchainLayout } from "./layout.ts";
import { ensureNodeDependencies, ensurePnpm } from "./node-deps.ts";
import { ensurePythonVenv, ensureTorch } from "./python-venv.ts";
import { checkRust } from "./rust.ts";
import { ensureSystemPrerequisites, freeGigabytes } from "./system.ts";

export function bootstrap(): void {
  const started = Date.now();
  const layout = toolchainLayout();
  // The free disk, printed first: a fresh CI machine once ran out of it halfway through torch.
  console.log(`bootstrap: toolchain at ${layout.root} (${freeGigabytes(layout.root).toFixed(1)} GB free)`);
  ensureSystemPrerequisites();
  checkRust();
  ensureNodeDependencies(layout, ensurePnpm(layout));
  ensurePythonVenv(layout);
  ensureCuda(layout);
  ensureTorch(layout);
  console.log(`bootstrap: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
