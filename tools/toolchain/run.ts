// Run a child process the way the bootstrap and the root commands want: print it, let its output
// through, and stop with a message that says which step failed.
import { spawnSync } from "node:child_process";

export class CommandError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export function run(command: string, args: readonly string[], options: RunOptions = {}): void {
  console.log(`$ ${[command, ...args].join(" ")}`);
  const result = spawnSync(command, args, {
    stdio: "inherit",
    cwd: options.cwd,
    env: options.env ?? process.env,
    shell: process.platform === "win32",
  });
  if (result.error !== undefined) {
    throw new CommandError(`cannot run '${command}': ${result.error.message}`, 127);
  }
  if (result.signal !== null) throw new CommandError(`'${command}' was killed by ${result.signal}`, 128);
  if (result.status !== 0) {
    throw new CommandError(`'${command} ${args.join(" ")}' exited with ${result.status}`, result.status ?? 1);
  }
}

/** The trimmed stdout of a command, or undefined if it cannot run or fails (for probing tools). */
export function probe(command: string, args: readonly string[], env?: NodeJS.ProcessEnv): string | undefined {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    env: env ?? process.env,
    stdio: ["ignore", "pipe", "ignore"],
    shell: process.platform === "win32",
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}
