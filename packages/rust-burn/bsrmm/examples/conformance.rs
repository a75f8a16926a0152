//! The Rust binding's conformance runner: every case of a vectors folder through the safe
//! `bsrmm` API (`BsrMatrix::from_bsr`, `DenseRef`/`DenseMut` views or `DeviceBuffer`s,
//! `matmul_into`; fp8: `from_bsr_scaled` and `matmul_fp8_into`), as a user calls it. packages/conformance runs it and checks what it writes.
//!
//!     cargo run -p bsrmm --example conformance -- VECTORS OUT DEVICE     (DEVICE: cpu | cuda:N)
//!
//! Writes OUT/results.txt ("<id> ok", "<id> error <CODE> <message>" or "<id> skip <reason>") and
//! OUT/<id>.bin, the whole C buffer after each successful multiply (packages/conformance/README.md
//! describes the vectors).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use bsrmm::{
    bf16, f16, matmul_fp8_into, matmul_into, sddmm_into, Activation, BsrMatrix, Context, CreateOptions, DenseMut, DenseRef,
    Device, DeviceBuffer, Element, Fp8Element, Layout, MatmulOptions, Op, ScaleKind, Scales, SddmmOptions, F8E4M3, F8E5M2,
};

/// An element as the vectors store it: little-endian bytes.
trait Raw: Element {
    const SIZE: usize;
    fn from_le(bytes: &[u8]) -> Self;
    fn to_le(self, out: &mut Vec<u8>);
}

macro_rules! raw {
    ($t:ty, $size:expr, |$b:ident| $from:expr, |$x:ident| $to:expr) => {
        impl Raw for $t {
            const SIZE: usize = $size;
            fn from_le($b: &[u8]) -> Self {
                $from
            }
            fn to_le(self, out: &mut Vec<u8>) {
                let $x = self;
                out.extend_from_slice(&$to);
            }
        }
    };
}
raw!(f32, 4, |b| f32::from_le_bytes(b.try_into().unwrap()), |x| x.to_le_bytes());
raw!(f64, 8, |b| f64::from_le_bytes(b.try_into().unwrap()), |x| x.to_le_bytes());
raw!(f16, 2, |b| f16::from_bits(u16::from_le_bytes(b.try_into().unwrap())), |x| x.to_bits().to_le_bytes());
raw!(bf16, 2, |b| bf16::from_bits(u16::from_le_bytes(b.try_into().unwrap())), |x| x.to_bits().to_le_bytes());
raw!(F8E4M3, 1, |b| F8E4M3::from_bits(b[0]), |x| [x.to_bits()]);
raw!(F8E5M2, 1, |b| F8E5M2::from_bits(b[0]), |x| [x.to_bits()]);

/// One manifest line: `case key=value ...`.
struct Case(HashMap<String, String>);

impl Case {
    fn text(&self, key: &str) -> &str {
        self.0.get(key).map(String::as_str).unwrap_or_else(|| panic!("manifest line lacks {key}"))
    }
    fn int(&self, key: &str) -> i64 {
        self.text(key).parse().unwrap_or_else(|_| panic!("{key} is not an integer"))
    }
    fn real(&self, key: &str) -> f64 {
        self.text(key).parse().unwrap_or_else(|_| panic!("{key} is not a number"))
    }
    fn layout(&self, key: &str) -> Layout {
        if self.text(key) == "row" { Layout::RowMajor } else { Layout::ColMajor }
    }
}

enum Outcome {
    Ok,
    Skip(&'static str),
}

fn read_manifest(folder: &Path) -> Vec<Case> {
    let text = fs::read_to_string(folder.join("manifest.txt")).expect("cannot read manifest.txt");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("bsrmm-conformance 3"), "not a bsrmm-conformance 3 manifest");
    lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let mut tokens = line.split_whitespace();
            assert_eq!(tokens.next(), Some("case"), "manifest line must start with 'case'");
            Case(tokens.map(|t| t.split_once('=').expect("token without '='")).map(|(k, v)| (k.into(), v.into())).collect())
        })
        .collect()
}

fn load<T: Raw>(folder: &Path, case: &Case, name: &str) -> Vec<T> {
    let bytes = fs::read(folder.join(case.text("id")).join(format!("{name}.bin"))).expect("cannot read an array");
    bytes.chunks_exact(T::SIZE).map(T::from_le).collect()
}

fn load_indices(folder: &Path, case: &Case, name: &str) -> Vec<i32> {
    let bytes = fs::read(folder.join(case.text("id")).join(format!("{name}.bin"))).expect("cannot read an array");
    bytes.chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap())).collect()
}

fn size(case: &Case, key: &str) -> Option<usize> {
    usize::try_from(case.int(key)).ok()
}

fn write_output<T: Raw>(out: &Path, case: &Case, values: Vec<T>) {
    let mut bytes = Vec::with_capacity(values.len() * T::SIZE);
    values.into_iter().for_each(|x| x.to_le(&mut bytes));
    fs::write(out.join(format!("{}.bin", case.text("id"))), bytes).expect("cannot write an output");
}

fn load_matrix<T: Raw>(ctx: &Context, folder: &Path, case: &Case, rows: usize, cols: usize, block: (usize, usize)) -> bsrmm::Result<BsrMatrix<T>> {
    BsrMatrix::<T>::from_bsr(
        ctx,
        rows,
        cols,
        block,
        &load_indices(folder, case, "row_ptr"),
        &load_indices(folder, case, "col_idx"),
        &load::<T>(folder, case, "values"),
        CreateOptions { sort_indices: case.int("sort") != 0 },
    )
}

/// `values = alpha * (X Y)[A's blocks] + beta * values`: X in the b fields, Y in the y fields,
/// the values in the c fields.
fn run_sddmm<T: Raw>(ctx: &Context, folder: &Path, case: &Case, out: &Path) -> bsrmm::Result<Outcome> {
    let sizes: Option<Vec<usize>> = ["rows", "cols", "bh", "bw", "b_rows", "b_cols", "b_ld", "y_rows", "y_cols", "y_ld", "c_rows", "c_cols", "c_ld"]
        .iter()
        .map(|k| size(case, k))
        .collect();
    let Some(&[rows, cols, bh, bw, x_rows, x_cols, x_ld, y_rows, y_cols, y_ld, v_rows, v_cols, v_ld]) = sizes.as_deref() else {
        return Ok(Outcome::Skip("sizes are usize in the Rust API: a negative size does not compile"));
    };
    let pattern = load_matrix::<T>(ctx, folder, case, rows, cols, (bh, bw))?;
    let (x_host, y_host) = (load::<T>(folder, case, "b"), load::<T>(folder, case, "y"));
    let mut values = load::<T>(folder, case, "c");
    let (x_layout, y_layout, v_layout) = (case.layout("b_layout"), case.layout("y_layout"), case.layout("c_layout"));
    let options = SddmmOptions::new().alpha(case.real("alpha")).beta(case.real("beta"));
    match ctx.device() {
        Device::Cpu => {
            let x = DenseRef::new(&x_host, x_rows, x_cols, x_ld, x_layout)?;
            let y = DenseRef::new(&y_host, y_rows, y_cols, y_ld, y_layout)?;
            sddmm_into(ctx, &pattern, x, y, DenseMut::new(&mut values, v_rows, v_cols, v_ld, v_layout)?, &options)?;
        }
        device => {
            let (x_dev, y_dev) = (DeviceBuffer::from_host(device, &x_host)?, DeviceBuffer::from_host(device, &y_host)?);
            let mut v_dev = DeviceBuffer::from_host(device, &values)?;
            let x = x_dev.view(x_rows, x_cols, x_ld, x_layout)?;
            let y = y_dev.view(y_rows, y_cols, y_ld, y_layout)?;
            sddmm_into(ctx, &pattern, x, y, v_dev.view_mut(v_rows, v_cols, v_ld, v_layout)?, &options)?;
            ctx.synchronize()?;
            v_dev.copy_to_host(&mut values)?;
        }
    }
    write_output(out, case, values);
    Ok(Outcome::Ok)
}

fn run_case<T: Raw>(ctx: &Context, folder: &Path, case: &Case, out: &Path) -> bsrmm::Result<Outcome> {
    let dtype = case.text("dtype");
    if case.text("b_dtype") != dtype || case.text("c_dtype") != dtype || case.text("bias_dtype") != dtype || case.text("y_dtype") != dtype {
        return Ok(Outcome::Skip(
            "the Rust API is generic over one element type: B (or X), Y, C (or the values) or a bias of another dtype than A does not compile",
        ));
    }
    if case.text("op") == "sddmm" {
        return run_sddmm::<T>(ctx, folder, case, out);
    }
    let sizes: Option<Vec<usize>> =
        ["rows", "cols", "bh", "bw", "b_rows", "b_cols", "b_ld", "c_rows", "c_cols", "c_ld"].iter().map(|k| size(case, k)).collect();
    let Some(&[rows, cols, bh, bw, b_rows, b_cols, b_ld, c_rows, c_cols, c_ld]) = sizes.as_deref() else {
        return Ok(Outcome::Skip("sizes are usize in the Rust API: a negative size does not compile"));
    };
    let Some(activation) = activation_of(case) else {
        return Ok(Outcome::Skip("Activation is an enum in the Rust API: an unknown activation does not compile"));
    };
    if case.int("c_aliases_b") != 0 {
        return Ok(Outcome::Skip("Rust's borrow rules forbid C aliasing B (a &mut and a & of one buffer)"));
    }
    let a = load_matrix::<T>(ctx, folder, case, rows, cols, (bh, bw))?;
    let b_host = load::<T>(folder, case, "b");
    let mut c_host = load::<T>(folder, case, "c");
    let bias_host = if case.int("bias") != 0 { Some(load::<T>(folder, case, "bias")) } else { None };
    let (b_layout, c_layout) = (case.layout("b_layout"), case.layout("c_layout"));
    let options = MatmulOptions::<T>::new()
        .op(if case.text("op") == "transpose" { Op::Transpose } else { Op::None })
        .alpha(case.real("alpha"))
        .beta(case.real("beta"))
        .activation(activation);
    match ctx.device() {
        Device::Cpu => {
            let b = DenseRef::new(&b_host, b_rows, b_cols, b_ld, b_layout)?;
            let c = DenseMut::new(&mut c_host, c_rows, c_cols, c_ld, c_layout)?;
            let options = match &bias_host {
                Some(bias) => options.bias(DenseRef::vector(bias)),
                None => options,
            };
            matmul_into(ctx, &a, b, c, &options)?;
        }
        device => {
            let b_dev = DeviceBuffer::from_host(device, &b_host)?;
            let mut c_dev = DeviceBuffer::from_host(device, &c_host)?;
            let bias_dev = bias_host.as_deref().map(|bias| DeviceBuffer::from_host(device, bias)).transpose()?;
            let options = match &bias_dev {
                Some(bias) => options.bias(bias.view(bias.len(), 1, 1, Layout::RowMajor)?),
                None => options,
            };
            matmul_into(ctx, &a, b_dev.view(b_rows, b_cols, b_ld, b_layout)?, c_dev.view_mut(c_rows, c_cols, c_ld, c_layout)?, &options)?;
            ctx.synchronize()?;
            c_dev.copy_to_host(&mut c_host)?;
        }
    }
    write_output(out, case, c_host);
    Ok(Outcome::Ok)
}

fn activation_of(case: &Case) -> Option<Activation> {
    match case.text("activation") {
        "none" => Some(Activation::None),
        "relu" => Some(Activation::Relu),
        "gelu" => Some(Activation::Gelu),
        "silu" => Some(Activation::Silu),
        _ => None,
    }
}

fn scale_kind(name: &str) -> ScaleKind {
    match name {
        "per-tensor" => ScaleKind::PerTensor,
        "per-block" => ScaleKind::PerBlock,
        "per-block-row" => ScaleKind::PerBlockRow,
        "per-column" => ScaleKind::PerColumn,
        other => panic!("unknown scale kind {other}"),
    }
}

/// An fp8 A (`a_scales`): B's fp8 type, then C's type (the bias's too), each a type parameter.
fn run_fp8<A: Raw + Fp8Element>(ctx: &Context, folder: &Path, case: &Case, out: &Path) -> bsrmm::Result<Outcome> {
    match case.text("b_dtype") {
        "float8_e4m3" => run_fp8_b::<A, F8E4M3>(ctx, folder, case, out),
        "float8_e5m2" => run_fp8_b::<A, F8E5M2>(ctx, folder, case, out),
        _ => Ok(Outcome::Skip("matmul_fp8_into takes an fp8 B: another B does not compile")),
    }
}

fn run_fp8_b<A: Raw + Fp8Element, B: Raw + Fp8Element>(ctx: &Context, folder: &Path, case: &Case, out: &Path) -> bsrmm::Result<Outcome> {
    if case.text("bias_dtype") != case.text("c_dtype") {
        return Ok(Outcome::Skip("the bias is in C's element type: a bias of another dtype does not compile"));
    }
    match case.text("c_dtype") {
        "float32" => run_fp8_typed::<A, B, f32>(ctx, folder, case, out),
        "float16" => run_fp8_typed::<A, B, f16>(ctx, folder, case, out),
        "bfloat16" => run_fp8_typed::<A, B, bf16>(ctx, folder, case, out),
        "float64" => run_fp8_typed::<A, B, f64>(ctx, folder, case, out),
        "float8_e4m3" => run_fp8_typed::<A, B, F8E4M3>(ctx, folder, case, out),
        "float8_e5m2" => run_fp8_typed::<A, B, F8E5M2>(ctx, folder, case, out),
        other => panic!("unknown dtype {other}"),
    }
}

fn run_fp8_typed<A: Raw + Fp8Element, B: Raw + Fp8Element, C: Raw>(ctx: &Context, folder: &Path, case: &Case, out: &Path) -> bsrmm::Result<Outcome> {
    let sizes: Option<Vec<usize>> =
        ["rows", "cols", "bh", "bw", "b_rows", "b_cols", "b_ld", "c_rows", "c_cols", "c_ld"].iter().map(|k| size(case, k)).collect();
    let Some(&[rows, cols, bh, bw, b_rows, b_cols, b_ld, c_rows, c_cols, c_ld]) = sizes.as_deref() else {
        return Ok(Outcome::Skip("sizes are usize in the Rust API: a negative size does not compile"));
    };
    let Some(activation) = activation_of(case) else {
        return Ok(Outcome::Skip("Activation is an enum in the Rust API: an unknown activation does not compile"));
    };
    let a_scales = load::<f32>(folder, case, "a_scales");
    let a = BsrMatrix::<A>::from_bsr_scaled(
        ctx, rows, cols, (bh, bw),
        &load_indices(folder, case, "row_ptr"), &load_indices(folder, case, "col_idx"), &load::<A>(folder, case, "values"),
        Scales::new(scale_kind(case.text("a_scales")), &a_scales),
        CreateOptions { sort_indices: case.int("sort") != 0 },
    )?;
    let b_host = load::<B>(folder, case, "b");
    let b_scales = load::<f32>(folder, case, "b_scales");
    let b_kind = scale_kind(case.text("b_scales"));
    let mut c_host = load::<C>(folder, case, "c");
    let bias_host = if case.int("bias") != 0 { Some(load::<C>(folder, case, "bias")) } else { None };
    let (b_layout, c_layout) = (case.layout("b_layout"), case.layout("c_layout"));
    let options = MatmulOptions::<C>::new()
        .op(if case.text("op") == "transpose" { Op::Transpose } else { Op::None })
        .alpha(case.real("alpha"))
        .beta(case.real("beta"))
        .activation(activation);
    match ctx.device() {
        Device::Cpu => {
            let options = match &bias_host {
                Some(bias) => options.bias(DenseRef::vector(bias)),
                None => options,
            }
            .b_scales(Scales::new(b_kind, &b_scales));
            let b = DenseRef::new(&b_host, b_rows, b_cols, b_ld, b_layout)?;
            matmul_fp8_into(ctx, &a, b, DenseMut::new(&mut c_host, c_rows, c_cols, c_ld, c_layout)?, &options)?;
        }
        device => {
            // On a GPU the core reads per-column scales in place: they go to the device with B.
            let b_dev = DeviceBuffer::from_host(device, &b_host)?;
            let scales_dev = DeviceBuffer::from_host(device, &b_scales)?;
            let mut c_dev = DeviceBuffer::from_host(device, &c_host)?;
            let bias_dev = bias_host.as_deref().map(|bias| DeviceBuffer::from_host(device, bias)).transpose()?;
            let options = match &bias_dev {
                Some(bias) => options.bias(bias.view(bias.len(), 1, 1, Layout::RowMajor)?),
                None => options,
            };
            let scales_ptr = scales_dev.view(b_scales.len(), 1, b_scales.len().max(1), Layout::ColMajor)?.as_ptr();
            // SAFETY: scales_dev holds b_scales.len() f32 on `device` until after the synchronize below.
            let options = options.b_scales(unsafe { Scales::from_raw_parts(b_kind, scales_ptr, b_scales.len(), device) });
            matmul_fp8_into(ctx, &a, b_dev.view(b_rows, b_cols, b_ld, b_layout)?, c_dev.view_mut(c_rows, c_cols, c_ld, c_layout)?, &options)?;
            ctx.synchronize()?;
            c_dev.copy_to_host(&mut c_host)?;
        }
    }
    write_output(out, case, c_host);
    Ok(Outcome::Ok)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [folder, out, device] = args.as_slice() else {
        eprintln!("usage: conformance VECTORS OUT DEVICE   (DEVICE: cpu | cuda:N)");
        std::process::exit(2);
    };
    let (folder, out) = (PathBuf::from(folder), PathBuf::from(out));
    fs::create_dir_all(&out).expect("cannot create OUT");
    let ctx = match device.strip_prefix("cuda:") {
        Some(n) => Context::new(Device::Cuda(n.parse().expect("cuda:N needs a number"))),
        None if device == "cpu" => Context::cpu(),
        None => panic!("DEVICE must be cpu or cuda:N, got {device}"),
    }
    .unwrap_or_else(|e| {
        eprintln!("conformance: no context on {device}: {e}");
        std::process::exit(2);
    });
    let mut lines = String::new();
    for case in read_manifest(&folder) {
        let outcome = match case.text("dtype") {
            "float32" => run_case::<f32>(&ctx, &folder, &case, &out),
            "float64" => run_case::<f64>(&ctx, &folder, &case, &out),
            "float16" => run_case::<f16>(&ctx, &folder, &case, &out),
            "bfloat16" => run_case::<bf16>(&ctx, &folder, &case, &out),
            "float8_e4m3" => run_fp8::<F8E4M3>(&ctx, &folder, &case, &out),
            "float8_e5m2" => run_fp8::<F8E5M2>(&ctx, &folder, &case, &out),
            other => panic!("unknown dtype {other}"),
        };
        let result = match outcome {
            Ok(Outcome::Ok) => "ok".to_string(),
            Ok(Outcome::Skip(reason)) => format!("skip {reason}"),
            Err(e) => format!("error {} {}", e.code(), e.message().split_whitespace().collect::<Vec<_>>().join(" ")),
        };
        lines.push_str(&format!("{} {result}\n", case.text("id")));
    }
    fs::write(out.join("results.txt"), lines).expect("cannot write results.txt");
}
