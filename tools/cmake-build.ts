// Configure, build and install the CMake project in the current directory with the project
// toolchain (packages/core-cuda's `build` script):
//   tsx ../../tools/cmake-build.ts [-DEXTRA=ON ...]      (extra arguments go to the configure step)
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cmakeBuildJobs, cmakeConfigureArgs } from "./toolchain/cmake.ts";
import { toolchainEnv } from "./toolchain/env.ts";

function cmake(args: string[], env: NodeJS.ProcessEnv): void {
  console.log(`$ cmake ${args.join(" ")}`);
  const result = spawnSync("cmake", args, { stdio: "inherit", env });
  if (result.error !== undefined) {
    console.error(`cmake-build: cannot run cmake: ${result.error.message}`);
    process.exit(127);
  }
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!existsSync("CMakeLists.txt")) {
  console.error(`cmake-build: no CMakeLists.txt in ${process.cwd()}`);
  process.exit(2);
}
const env = toolchainEnv();
cmake(cmakeConfigureArgs(process.argv.slice(2)), env);
cmake(["--build", "build", "-j", String(cmakeBuildJobs())], env);
cmake(["--install", "build"], env);
console.log(`cmake-build: installed into ${join(process.cwd(), "build", "install")}`);
