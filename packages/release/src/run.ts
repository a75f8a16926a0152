// Runs the build tools the release steps drive (pip, auditwheel, cargo, npm), printing each
// command, so a failure in a test log says which command failed and where.
import { execFileSync, type ExecFileSyncOptions } from "node:child_process";

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

function describe(command: string, args: string[], cwd: string | undefined): string {
  return `${command} ${args.join(" ")}${cwd === undefined ? "" : ` (in ${cwd})`}`;
}

function exec(command: string, args: string[], options: RunOptions, stdio: ExecFileSyncOptions["stdio"]): string {
  try {
    const out = execFileSync(command, args, { ...options, stdio, encoding: "utf8", maxBuffer: 64 << 20 });
    return typeof out === "string" ? out : "";
  } catch (error) {
    const status = (error as { status?: number | null }).status;
    throw new Error(`${describe(command, args, options.cwd)} failed` +
      (typeof status === "number" ? ` with exit code ${status}` : `: ${(error as Error).message}`));
  }
}

/** Runs a command with its output going to ours. */
export function run(command: string, args: string[], options: RunOptions = {}): void {
  console.log(`$ ${describe(command, args, options.cwd)}`);
  exec(command, args, options, "inherit");
}

/** Runs a command and returns its standard output (standard error goes to ours). */
export function output(command: string, args: string[], options: RunOptions = {}): string {
  return exec(command, args, options, ["ignore", "pipe", "inherit"]).trim();
}
