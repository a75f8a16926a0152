//! Exposes whether the core was built with CUDA as cfg `bsrmm_cuda` (for the GPU tests, which
//! need the CUDA runtime the core links).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(bsrmm_cuda)");
    if std::env::var("DEP_BSRMM_CUDA").is_ok_and(|v| v == "1") {
        println!("cargo::rustc-cfg=bsrmm_cuda");
    }
}
