// What about this machine changes test results without changing a file: whether (and which) GPUs
// and driver are present. main.ts exports it as BSRMM_MACHINE, which turbo hashes (globalEnv), so a
// test that skipped its GPU cases on a CPU-only run is never replayed from cache on a GPU machine.
import { probe } from "./run.ts";

export function machineFingerprint(): string {
  const gpus = probe("nvidia-smi", ["--query-gpu=name,driver_version", "--format=csv,noheader"]);
  return gpus === undefined || gpus === "" ? "no-gpu" : gpus.split("\n").map((l) => l.trim()).join("; ");
}
