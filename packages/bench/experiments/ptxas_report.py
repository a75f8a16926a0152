#!/usr/bin/env python3
"""Registers and spills of every CUDA kernel, from a build log made with `ptxas -v`
(BSRMM_PTXAS_VERBOSE=ON). Prints one line per kernel and arch, spilling kernels first.

    python3 packages/bench/experiments/ptxas_report.py BUILD_LOG
"""
import re
import signal
import subprocess
import sys


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return out.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return names


def short(name):
    """Drops the parameter list and namespaces: sm80::tensorop_matmul_kernel<TileConfig<math0, 128, ...>>."""
    if name.endswith(")"):  # strip the trailing, possibly nested, parameter list
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    name = name.replace("(bsrmm::cuda::sm80::Math)", "math").replace("bsrmm::cuda::", "")
    return name.replace("(anonymous namespace)::", "").replace("void ", "")


def main(path):
    entries = []  # (arch, mangled, registers, stack, spill_stores, spill_loads)
    current = None
    stack = spills = loads = 0
    with open(path, errors="replace") as log:
        for line in log:
            m = re.search(r"Compiling entry function '([^']+)' for '([^']+)'", line)
            if m:
                current = (m.group(2), m.group(1))
                stack = spills = loads = 0
                continue
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
            if m and current:
                stack, spills, loads = (int(x) for x in m.groups())
                continue
            m = re.search(r"Used (\d+) registers", line)
            if m and current:
                entries.append((current[0], current[1], int(m.group(1)), stack, spills, loads))
                current = None
    if not entries:
        print("no ptxas -v output found in", path)
        return 1
    names = demangle([e[1] for e in entries])
    rows = sorted(zip(entries, names), key=lambda x: (-(x[0][4] + x[0][5]), x[0][0], x[1]))
    spilling = sum(1 for e, _ in rows if e[4] or e[5])
    print(f"{len(rows)} kernels x archs; {spilling} with spills")
    print(f"{'arch':8} {'regs':>4} {'stack':>5} {'spill st/ld':>11}  kernel")
    for e, name in rows:
        print(f"{e[0]:8} {e[2]:4d} {e[3]:5d} {e[4]:5d}/{e[5]:<5d}  {short(name)}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # read through `| head`: stop quietly
    sys.exit(main(sys.argv[1]))
