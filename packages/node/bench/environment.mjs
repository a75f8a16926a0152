// The environment a result was measured in (RESULTS.md, "environment"), as far as Node can see
// it: versions, CPU, and on CUDA what nvidia-smi reports (no torch here to ask the GPU itself).
import { execFileSync } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";

const SMI_FIELDS = "name,memory.total,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,temperature.gpu";

export function capture(bsrmm, cuda) {
  const env = {
    runner: "node",
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpu_model: os.cpus()[0]?.model ?? "unknown",
    cpu_count: os.cpus().length,
    cpu_affinity: os.availableParallelism(),
    threads: {},
    versions: { node: process.versions.node, bsrmm: bsrmm.version() },
    git_commit: gitCommit(),
  };
  if (cuda) env.gpu = gpuInfo();
  return env;
}

function gitCommit() {
  try {
    const cwd = fileURLToPath(new URL(".", import.meta.url));
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd, encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "ignore"] }).trim() || null;
  } catch {
    return null;
  }
}

/** nvidia-smi's view of GPU 0 (the report reads name, driver and clocks), or why there is none. */
export function gpuInfo() {
  try {
    const out = execFileSync("nvidia-smi", [`--query-gpu=${SMI_FIELDS}`, "--format=csv,noheader,nounits"], { encoding: "utf8", timeout: 10000 });
    const values = out.trim().split("\n")[0].split(",").map((v) => v.trim());
    const smi = Object.fromEntries(SMI_FIELDS.split(",").map((field, i) => [field, values[i]]));
    return { name: smi.name, memory_bytes: Number(smi["memory.total"]) * 2 ** 20 || null, nvidia_smi: smi };
  } catch (error) {
    return { nvidia_smi_error: String(error.message ?? error).split("\n")[0] };
  }
}
