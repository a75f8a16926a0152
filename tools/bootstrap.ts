// Set up (or check) the project-local toolchain in .toolchain/: tsx tools/bootstrap.ts
import { bootstrap } from "./toolchain/bootstrap.ts";
import { CommandError } from "./toolchain/run.ts";

try {
  bootstrap();
} catch (error) {
  console.error(`bootstrap failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof CommandError ? error.exitCode : 1);
}
