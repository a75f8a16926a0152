"""Checks a built bsrmm wheel: what pip and a user's machine will see.

    python check_wheel.py WHEEL --version X.Y.Z (--cuda | --no-cuda)

- a manylinux platform tag, and nothing grafted in by auditwheel (so the extension needs only
  the libraries every manylinux system has: libstdc++, libm, libgcc_s, libc);
- the extension finds anything next to it first (RUNPATH $ORIGIN) and needs no CUDA library:
  the core and cudart are linked statically;
- with --cuda, SASS for sm_90a and sm_80 and compute_80 PTX inside (cuobjdump); with --no-cuda,
  no CUDA code at all (the package says so at run time: bsrmm.cuda_unavailable_reason());
- the metadata's name, version, numpy requirement, Python floor and license, and the license
  text inside (dist-info/licenses/LICENSE, the repository's LICENSE).
Runs in the toolchain venv: pyelftools comes with auditwheel, cuobjdump with nvidia-cuda-cuobjdump.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

# Libraries a statically linked core or cudart would show up as if the link went wrong.
FORBIDDEN_NEEDED = re.compile(r"^lib(cudart|cuda|bsrmm|nvrtc|cublas)\b")


class CheckFailed(Exception):
    pass


def cuobjdump() -> str:
    import nvidia  # namespace package of NVIDIA's wheels

    for root in nvidia.__path__:
        tool = Path(root) / "cu13" / "bin" / "cuobjdump"
        if tool.is_file():
            return str(tool)
    raise CheckFailed("cuobjdump not found: install nvidia-cuda-cuobjdump (tools/toolchain/requirements/python.txt)")


def check_name(wheel: Path, version: str) -> None:
    parts = wheel.name[: -len(".whl")].split("-")
    if len(parts) != 5:
        raise CheckFailed("not name-version-python-abi-platform.whl")
    name, wheel_version, _, _, platform = parts
    if name != "bsrmm" or wheel_version != version:
        raise CheckFailed(f"expected bsrmm {version}, the name says {name} {wheel_version}")
    if not re.fullmatch(r"manylinux_\d+_\d+_(x86_64|aarch64)", platform):
        raise CheckFailed(f"platform tag {platform} is not manylinux_X_Y_<arch>")


def check_metadata(archive: zipfile.ZipFile, version: str) -> None:
    metadata = Parser().parsestr(archive.read(f"bsrmm-{version}.dist-info/METADATA").decode())
    if metadata["Name"] != "bsrmm" or metadata["Version"] != version:
        raise CheckFailed(f"METADATA says {metadata['Name']} {metadata['Version']}, expected bsrmm {version}")
    if not any(r.startswith("numpy") for r in metadata.get_all("Requires-Dist") or []):
        raise CheckFailed("METADATA does not require numpy")
    if metadata["Requires-Python"] != ">=3.10":
        raise CheckFailed(f"METADATA says Requires-Python {metadata['Requires-Python']}, expected >=3.10")
    if metadata["License-Expression"] != "Apache-2.0":
        raise CheckFailed(f"METADATA says License-Expression {metadata['License-Expression']}, expected Apache-2.0")
    license_text = (Path(__file__).resolve().parents[3] / "LICENSE").read_bytes()
    shipped = f"bsrmm-{version}.dist-info/licenses/LICENSE"
    if shipped not in archive.namelist() or archive.read(shipped) != license_text:
        raise CheckFailed("the wheel's dist-info/licenses/LICENSE is not the repository's LICENSE")


def dynamic_entries(library: Path) -> tuple[list[str], list[str], bool]:
    """DT_NEEDED names, RUNPATH/RPATH entries, and whether a .nv_fatbin section exists."""
    with library.open("rb") as f:
        elf = ELFFile(f)
        needed: list[str] = []
        search: list[str] = []
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif tag.entry.d_tag in ("DT_RUNPATH", "DT_RPATH"):
                        search += (tag.runpath if tag.entry.d_tag == "DT_RUNPATH" else tag.rpath).split(":")
        return needed, search, elf.get_section_by_name(".nv_fatbin") is not None


def check_cuda_code(library: Path, expect_cuda: bool, has_fatbin: bool) -> str:
    if not expect_cuda:
        if has_fatbin:
            raise CheckFailed(f"{library.name} has CUDA code (.nv_fatbin) but the core was built without CUDA")
        return "CPU only (no CUDA compiler when the core was built)"
    if not has_fatbin:
        raise CheckFailed(f"{library.name} has no .nv_fatbin section: the core's CUDA backend is missing")
    tool = cuobjdump()
    elves = subprocess.run([tool, "--list-elf", str(library)], check=True, capture_output=True, text=True).stdout
    ptx = subprocess.run([tool, "--list-ptx", str(library)], check=True, capture_output=True, text=True).stdout
    counts = {
        "sm_90a SASS": len(re.findall(r"\.sm_90a\.cubin", elves)),
        "sm_80 SASS": len(re.findall(r"\.sm_80\.cubin", elves)),
        "compute_80 PTX": len(re.findall(r"\.sm_80\.ptx", ptx)),
    }
    missing = [what for what, n in counts.items() if n == 0]
    if missing:
        raise CheckFailed(f"{library.name} lacks {', '.join(missing)} (cuobjdump found {counts})")
    return ", ".join(f"{what} in {n} files" for what, n in counts.items())


def check(wheel: Path, version: str, expect_cuda: bool) -> None:
    check_name(wheel, version)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        grafted = [n for n in names if n.startswith("bsrmm.libs/")]
        if grafted:
            raise CheckFailed(f"auditwheel copied libraries outside the manylinux policy into the wheel: {grafted}")
        extensions = [n for n in names if re.fullmatch(r"bsrmm/_core\..*\.so", n)]
        if len(extensions) != 1:
            raise CheckFailed(f"expected one bsrmm/_core.*.so, found {extensions}")
        check_metadata(archive, version)
        with tempfile.TemporaryDirectory() as tmp:
            library = Path(archive.extract(extensions[0], tmp))
            needed, search, has_fatbin = dynamic_entries(library)
            if "$ORIGIN" not in search:
                raise CheckFailed(f"{library.name}: RUNPATH {search} lacks $ORIGIN")
            forbidden = [n for n in needed if FORBIDDEN_NEEDED.match(n)]
            if forbidden:
                raise CheckFailed(f"{library.name} needs {forbidden}: the core and cudart must be linked statically")
            cuda = check_cuda_code(library, expect_cuda, has_fatbin)
    print(f"check_wheel: {wheel.name}: needs {', '.join(needed)}; RUNPATH {':'.join(search)}; {cuda}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--version", required=True)
    parser.add_argument("--cuda", action=argparse.BooleanOptionalAction, required=True)
    args = parser.parse_args()
    try:
        check(args.wheel, args.version, args.cuda)
    except CheckFailed as failure:
        print(f"check_wheel: {args.wheel.name}: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
