// Run one command with the project-local toolchain (see toolchain/env.ts), e.g. from a
// package script:   tsx ../../tools/with-toolchain.ts cmake --build build
// The command's exit status (or signal) becomes ours, so turbo sees real failures.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { toolchainEnv } from "./toolchain/env.ts";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  console.error("usage: tsx tools/with-toolchain.ts <command> [args...]");
  process.exit(2);
}

const child = spawn(command, args, {
  env: toolchainEnv(),
  stdio: "inherit",
  // Windows resolves .cmd/.bat shims (npm, pnpm) only through a shell.
  shell: process.platform === "win32",
});

// Ctrl-C reaches the whole process group already; forwarding covers a plain `kill <our pid>`.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => child.kill(signal));
}

child.on("error", (error: NodeJS.ErrnoException) => {
  const why = error.code === "ENOENT" ? "not found on PATH (did the bootstrap run?)" : error.message;
  console.error(`with-toolchain: cannot run '${command}': ${why}`);
  process.exit(127);
});

child.on("exit", (code, signal) => {
  if (signal !== null) process.exit(128 + (constants.signals[signal] ?? 0));
  process.exit(code ?? 1);
});
