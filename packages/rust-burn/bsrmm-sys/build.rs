//! Builds (or finds) the bsrmm core, compiles the cxx bridge against its headers and links the
//! core (statically by default) with exactly the libraries its exported CMake config asks for.
//!
//! Environment:
//!   BSRMM_CORE_PREFIX  a prebuilt install of the core (e.g. packages/core-cuda/build/install):
//!                      used as is, nothing is rebuilt.
//!   BSRMM_CORE_LINK    `static` (default) or `dynamic`: link libbsrmm.a, or libbsrmm.so (built
//!                      with BUILD_SHARED_LIBS, or the prefix's, which must then be shared). The
//!                      program then needs that libbsrmm.so.0 at run time (LD_LIBRARY_PATH): one
//!                      copy of the CUDA kernels serves many programs (tools/gpu/stage-carry.sh).
//!   BSRMM_CORE_SOURCE  the core's source dir (default: core-cuda/ in this crate, a link to
//!                      packages/core-cuda in the repository, a copy in the published crate).
//!   BSRMM_NO_CUDA=1    build the core CPU-only even where nvcc is found.
//!   CUDACXX            the nvcc to use; otherwise `nvcc` on PATH; with neither, CPU-only.
//!   BSRMM_JOBS         parallel native build jobs (default 2: the dev machines share 2 cores).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    for var in ["BSRMM_CORE_PREFIX", "BSRMM_CORE_LINK", "BSRMM_CORE_SOURCE", "BSRMM_NO_CUDA", "CUDACXX", "PATH", "BSRMM_JOBS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=shim");
    println!("cargo:rerun-if-changed=cmake/link-probe/CMakeLists.txt");

    let nvcc = find_nvcc();
    let shared = match env::var("BSRMM_CORE_LINK").as_deref() {
        Err(_) | Ok("") | Ok("static") => false,
        Ok("dynamic") => true,
        Ok(other) => fail(&format!("BSRMM_CORE_LINK={other}: expected `static` or `dynamic`")),
    };
    let prefix = match env::var_os("BSRMM_CORE_PREFIX") {
        Some(prefix) => {
            let prefix = PathBuf::from(prefix);
            if !prefix.join("include/bsrmm/bsrmm.hpp").is_file() {
                fail(&format!(
                    "BSRMM_CORE_PREFIX={} holds no include/bsrmm/bsrmm.hpp: point it at an install \
                     of packages/core-cuda (cmake --install), or unset it to build the core here",
                    prefix.display()
                ));
            }
            prefix
        }
        None => build_core(nvcc.as_deref(), shared),
    };

    let (link, cuda, prefix_shared) = probe_link_line(&prefix, nvcc.as_deref());
    if prefix_shared != shared {
        fail(&format!(
            "BSRMM_CORE_LINK={} but the core at {} is a {} library: install the core with \
             -DBUILD_SHARED_LIBS={}, or set BSRMM_CORE_LINK={}",
            if shared { "dynamic" } else { "static" },
            prefix.display(),
            if prefix_shared { "shared" } else { "static" },
            if shared { "ON" } else { "OFF" },
            if prefix_shared { "dynamic" } else { "static" },
        ));
    }

    cxx_build::bridge("src/lib.rs")
        .file("shim/bsrmm_shim.cc")
        .include(prefix.join("include"))
        .std("c++17")
        .compile("bsrmm-sys-bridge");

    // After the bridge: a static archive must follow the objects that use it on the link line.
    for entry in &link {
        println!("{entry}");
    }

    // Metadata for crates above (DEP_BSRMM_PREFIX, DEP_BSRMM_INCLUDE, DEP_BSRMM_CUDA).
    println!("cargo:prefix={}", prefix.display());
    println!("cargo:include={}", prefix.join("include").display());
    println!("cargo:cuda={}", if cuda { 1 } else { 0 });
}

fn fail(message: &str) -> ! {
    eprintln!("bsrmm-sys: {message}");
    std::process::exit(1);
}

/// The nvcc to build CUDA kernels with, or None for a CPU-only core.
fn find_nvcc() -> Option<PathBuf> {
    if env::var("BSRMM_NO_CUDA").is_ok_and(|v| v == "1") {
        return None;
    }
    if let Some(cudacxx) = env::var_os("CUDACXX").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(cudacxx));
    }
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|dir| dir.join("nvcc")).find(|nvcc| nvcc.is_file())
}

fn build_core(nvcc: Option<&Path>, shared: bool) -> PathBuf {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let source = env::var_os("BSRMM_CORE_SOURCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("core-cuda"));
    if !source.join("CMakeLists.txt").is_file() {
        fail(&format!(
            "no core sources at {} (set BSRMM_CORE_SOURCE, or BSRMM_CORE_PREFIX to a prebuilt install)",
            source.display()
        ));
    }
    for dir in ["CMakeLists.txt", "include", "src", "cmake"] {
        println!("cargo:rerun-if-changed={}", source.join(dir).display());
    }

    let jobs = env::var("BSRMM_JOBS").unwrap_or_else(|_| "2".into());
    let mut config = cmake::Config::new(&source);
    config
        .profile("Release")
        .define("BSRMM_BUILD_TESTS", "OFF")
        .define("BUILD_SHARED_LIBS", if shared { "ON" } else { "OFF" })
        // Rust links the archive into position-independent executables and cdylibs (Node addon).
        .define("CMAKE_POSITION_INDEPENDENT_CODE", "ON")
        .env("CMAKE_BUILD_PARALLEL_LEVEL", &jobs);
    if Command::new("ninja").arg("--version").output().is_ok() {
        config.generator("Ninja");
    }
    match nvcc {
        // Explicit OFF: CMake would otherwise look for a system nvcc by itself.
        None => config.define("BSRMM_CUDA", "OFF"),
        Some(nvcc) => config.define("BSRMM_CUDA", "ON").define("CMAKE_CUDA_COMPILER", nvcc),
    };
    // The cmake crate installs into OUT_DIR; that install is the prefix.
    config.build()
}

/// The libraries (and search dirs) a program needs to link `bsrmm::bsrmm`, as cargo directives,
/// whether the core has its CUDA backend, and whether it is a shared library.
///
/// The core's exported config is the authority (static CUDA runtime, threads, ...), so a tiny
/// CMake project links a program against it and the link line CMake writes is translated.
fn probe_link_line(prefix: &Path, nvcc: Option<&Path>) -> (Vec<String>, bool, bool) {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("link-probe");
    let _ = fs::remove_dir_all(&out);
    let mut cmd = Command::new("cmake");
    cmd.arg("-S")
        .arg(manifest.join("cmake/link-probe"))
        .arg("-B")
        .arg(&out)
        .args(["-G", "Unix Makefiles", "-DCMAKE_BUILD_TYPE=Release"])
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()));
    if let Some(nvcc) = nvcc {
        // Lets the core's config find the CUDA toolkit its static runtime comes from.
        if let Some(root) = nvcc.parent().and_then(Path::parent) {
            cmd.arg(format!("-DCUDAToolkit_ROOT={}", root.display()));
        }
    }
    let output = cmd.output().unwrap_or_else(|e| fail(&format!("cannot run cmake: {e}")));
    if !output.status.success() {
        fail(&format!(
            "the link probe (find_package(bsrmm) in {}) failed:\n{}{}",
            prefix.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let link_txt = out.join("CMakeFiles/bsrmm_link_probe.dir/link.txt");
    let line = fs::read_to_string(&link_txt)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", link_txt.display())));
    let flag = |file: &str| fs::read_to_string(out.join(file)).is_ok_and(|v| v.trim() == "1");
    (translate_link_line(&line, &out), flag("with_cuda.txt"), flag("shared.txt"))
}

/// Turns a compiler-driver link command into cargo link directives, in order.
fn translate_link_line(line: &str, probe_dir: &Path) -> Vec<String> {
    let mut directives = Vec::new();
    let mut push = |d: String| {
        if !directives.contains(&d) {
            directives.push(d);
        }
    };
    let mut tokens = line.split_whitespace().skip(1);
    while let Some(token) = tokens.next() {
        if token == "-o" {
            tokens.next();
        } else if let Some(dir) = token.strip_prefix("-L") {
            push(format!("cargo:rustc-link-search=native={dir}"));
        } else if let Some(lib) = token.strip_prefix("-l") {
            push(format!("cargo:rustc-link-lib={lib}"));
        } else if token == "-pthread" {
            push("cargo:rustc-link-lib=pthread".into());
        } else if token == "-fopenmp" {
            push("cargo:rustc-link-lib=gomp".into());
        } else if token.ends_with(".a") || token.contains(".so") {
            let path = probe_dir.join(token);
            let (Some(dir), Some(file)) = (path.parent(), path.file_name().and_then(|f| f.to_str()))
            else {
                continue;
            };
            let Some(stem) = file.strip_prefix("lib") else { continue };
            if let Some(name) = stem.strip_suffix(".a") {
                push(format!("cargo:rustc-link-search=native={}", dir.display()));
                push(format!("cargo:rustc-link-lib=static={name}"));
            } else if let Some((name, _)) = stem.split_once(".so") {
                push(format!("cargo:rustc-link-search=native={}", dir.display()));
                push(format!("cargo:rustc-link-lib=dylib={name}"));
            }
        }
    }
    directives
}
