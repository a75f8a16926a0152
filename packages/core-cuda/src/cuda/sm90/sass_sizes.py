#!/usr/bin/env python3
"""Per-kernel size of the sm90 variant translation units: SASS instructions, registers, spills,
stack and static shared memory, so a change that should leave the kernels alone can show it did.

  sass_sizes.py measure OUT_DIR   compile row_tile_variants.cu and transposed_variants.cu for
                                  sm_90a (-Xptxas -v, in parallel), write OUT_DIR/sizes.tsv
  sass_sizes.py tabulate OUT_DIR  the same from OUT_DIR's objects and ptxas logs already there
  sass_sizes.py compare A.tsv B.tsv   one row per kernel: A's and B's numbers and B - A

Run from packages/core-cuda with the project toolchain (nvcc, and cuobjdump + nvdisasm from the
venv's nvidia / triton wheels: the toolkit wheels ship no nvdisasm). Instructions are counted
without the NOP padding after a function's last branch; a kernel is keyed by its template
arguments, not its parameter type, so a parameter struct's rename compares like for like.
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

UNITS = ("row_tile_variants", "transposed_variants")
REPO = Path(__file__).resolve().parents[5]
NVCC = REPO / ".toolchain/cuda/nvidia/cu13/bin/nvcc"
SITE = next((REPO / ".toolchain/venv/lib").glob("python3*/site-packages"))
CUOBJDUMP = SITE / "nvidia/cu13/bin/cuobjdump"
NVDISASM = SITE / "triton/backends/nvidia/bin/nvdisasm"
FIELDS = ("sass", "registers", "spill_bytes", "stack_bytes", "smem_bytes")


def kernel_key(mangled: str) -> str:
    name = subprocess.run(["c++filt", mangled], capture_output=True, text=True, check=True).stdout.strip()
    name = name.removeprefix("void ").replace("bsrmm::cuda::sm90::", "")
    return name[: name.rfind("(")].replace(" ", "")


def compile_unit(unit: str, out: Path) -> None:
    core = REPO / "packages/core-cuda"
    cmd = [str(NVCC), "-DBSRMM_WITH_CUDA=1", "-Iinclude", "-Isrc",
           f"-isystem={REPO / '.toolchain/cuda/nvidia/cu13/include'}",
           "-gencode=arch=compute_90a,code=sm_90a", "--expt-relaxed-constexpr", "-std=c++17",
           "-Xptxas", "-v", "-c", f"src/cuda/sm90/{unit}.cu", "-o", str(out / f"{unit}.o")]
    done = subprocess.run(cmd, cwd=core, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{unit}.cu did not compile:\n{done.stderr}")
    (out / f"{unit}.ptxas").write_text(done.stderr)


def ptxas_numbers(log: str) -> dict:
    numbers, current = {}, None
    for line in log.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            current = numbers.setdefault(m.group(1), {"smem_bytes": 0})
        elif current is not None and (m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)):
            current["stack_bytes"], current["spill_bytes"] = int(m.group(1)), int(m.group(2))
        elif current is not None and (m := re.search(r"Used (\d+) registers", line)):
            current["registers"] = int(m.group(1))
            if s := re.search(r"(\d+) bytes smem", line):
                current["smem_bytes"] = int(s.group(1))
    return numbers


def sass_counts(obj: Path) -> dict:
    env = dict(os.environ, NVDISASM_PATH=str(NVDISASM), PATH=f"{NVDISASM.parent}:{os.environ['PATH']}")
    sass = subprocess.run([str(CUOBJDUMP), "-sass", str(obj)], capture_output=True, text=True,
                          check=True, env=env).stdout
    counts, current = {}, None
    for line in sass.splitlines():
        if m := re.search(r"Function : (\w+)", line):
            current, counts[m.group(1)] = m.group(1), []
        elif current and (m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)):
            counts[current].append(m.group(1))
    # The padding after the final self-branch is alignment, not code.
    return {name: len(list_without_padding(ops)) for name, ops in counts.items()}


def list_without_padding(ops: list) -> list:
    while ops and ops[-1] == "NOP":
        ops = ops[:-1]
    return ops


def measure(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(len(UNITS)) as pool:
        list(pool.map(lambda u: compile_unit(u, out), UNITS))
    tabulate(out)


def tabulate(out: Path) -> None:
    rows = []
    for unit in UNITS:
        numbers = ptxas_numbers((out / f"{unit}.ptxas").read_text())
        for mangled, sass in sass_counts(out / f"{unit}.o").items():
            row = dict(numbers[mangled], sass=sass)
            rows.append("\t".join([kernel_key(mangled)] + [str(row[f]) for f in FIELDS]))
    (out / "sizes.tsv").write_text("kernel\t" + "\t".join(FIELDS) + "\n" + "\n".join(sorted(rows)) + "\n")
    print(f"{len(rows)} kernels -> {out / 'sizes.tsv'}")


def read_sizes(path: str) -> dict:
    lines = Path(path).read_text().splitlines()[1:]
    return {k: dict(zip(FIELDS, map(int, v))) for k, *v in (line.split("\t") for line in lines)}


def compare(a_path: str, b_path: str) -> None:
    a, b = read_sizes(a_path), read_sizes(b_path)
    print("| kernel | SASS before | SASS after | diff | regs | spills | stack | smem |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(a.keys() | b.keys()):
        if key not in a or key not in b:
            print(f"| `{key}` | {'only in ' + (a_path if key in a else b_path)} |")
            continue
        x, y = a[key], b[key]
        other = ["=" if x[f] == y[f] else f"{x[f]} -> {y[f]}" for f in FIELDS[1:]]
        print(f"| `{key}` | {x['sass']} | {y['sass']} | {y['sass'] - x['sass']:+d} | " + " | ".join(other) + " |")
    diffs = [b[k]["sass"] - a[k]["sass"] for k in a.keys() & b.keys()]
    print(f"\n{len(diffs)} kernels; SASS diff min {min(diffs):+d}, max {max(diffs):+d}, total {sum(diffs):+d}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "measure":
        measure(Path(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "tabulate":
        tabulate(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
