//! GPU multiplies and SDDMMs: every dtype, matrices made from host arrays, from device arrays and from another
//! matrix's structure with borrowed device values, dense
//! operands in device memory (both layouts, with the epilogue) and host data staged through
//! device buffers, and the errors a GPU call must give. Skips (with the reason) where bsrmm
//! reports no CUDA device or was built without CUDA; with BSRMM_TEST_REQUIRE_CUDA=1 (the GPU
//! machine's run scripts set it) a missing GPU fails instead, so a broken setup cannot pass.

mod common;

use bsrmm::{
    bf16, f16, matmul_fp8_into, matmul_into, sddmm_into, Activation, BsrMatrix, Context, DenseMut, DenseRef, Device,
    DeviceBuffer, Element, Fp8Element, Layout, MatmulOptions, Op, ScaleKind, Scales, SddmmOptions, F8E4M3, F8E5M2,
};
use common::{check, reference, sddmm_reference, RandomBsr, Rng};

fn gpu_or_skip(test: &str) -> Option<Context> {
    let Some(reason) = bsrmm::cuda_unavailable_reason() else {
        return Some(Context::new(Device::Cuda(0)).expect("a CUDA context on device 0"));
    };
    if std::env::var("BSRMM_TEST_REQUIRE_CUDA").is_ok_and(|v| v == "1") {
        panic!("{test}: BSRMM_TEST_REQUIRE_CUDA=1 but {reason}");
    }
    eprintln!("SKIP {test}: {reason}");
    None
}

/// Where a GPU matrix comes from.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// Built on the host, copied to the GPU.
    HostCopy,
    /// Built from BSR arrays already in device memory, the values borrowed in place.
    DeviceBorrowed,
    /// Another matrix's structure (with other values) and these values borrowed from device
    /// memory through `with_raw_values`: how weights that change every step are multiplied.
    SharedStructure,
}

/// i32 indices in a device buffer: `DeviceBuffer` holds elements, so the indices travel as f32
/// of the same bits (a byte copy either way).
fn device_indices(indices: &[i32]) -> DeviceBuffer<f32> {
    let bits: Vec<f32> = indices.iter().map(|&i| f32::from_bits(i as u32)).collect();
    DeviceBuffer::from_host(Device::Cuda(0), &bits).unwrap()
}

/// The device arrays a borrowed matrix reads; they must outlive it.
struct DeviceBsr<T: Element> {
    row_ptr: DeviceBuffer<f32>,
    col_idx: DeviceBuffer<f32>,
    values: DeviceBuffer<T>,
}

fn gpu_matrix<T: Element>(gpu: &Context, a: &RandomBsr<T>, source: Source) -> (BsrMatrix<T>, Option<DeviceBsr<T>>) {
    match source {
        Source::HostCopy => {
            let cpu = Context::cpu().unwrap();
            let host = BsrMatrix::from_bsr(&cpu, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
            (host.copy_to(gpu).unwrap(), None)
        }
        Source::DeviceBorrowed => {
            let arrays = DeviceBsr {
                row_ptr: device_indices(&a.row_ptr),
                col_idx: device_indices(&a.col_idx),
                values: DeviceBuffer::from_host(Device::Cuda(0), &a.values).unwrap(),
            };
            // SAFETY: the arrays hold the sizes the matrix reads and are returned to the caller,
            // which keeps them alive (and unchanged) for as long as the matrix.
            let matrix = unsafe {
                BsrMatrix::from_raw_parts(
                    gpu,
                    a.rows,
                    a.cols,
                    a.block,
                    a.col_idx.len(),
                    arrays.row_ptr.view(a.row_ptr.len(), 1, 1, Layout::RowMajor).unwrap().as_ptr().cast::<i32>(),
                    arrays.col_idx.view(a.col_idx.len().max(1), 1, 1, Layout::RowMajor).unwrap().as_ptr().cast::<i32>(),
                    arrays.values.view(a.values.len().max(1), 1, 1, Layout::RowMajor).unwrap().as_ptr(),
                    Device::Cuda(0),
                    true,
                )
            }
            .unwrap();
            (matrix, Some(arrays))
        }
        Source::SharedStructure => {
            let cpu = Context::cpu().unwrap();
            let other: Vec<T> = a.values.iter().map(|v| T::from_f64(0.5 - v.to_f64())).collect();
            let like = BsrMatrix::from_bsr(&cpu, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &other, Default::default())
                .unwrap()
                .copy_to(gpu)
                .unwrap();
            let arrays = DeviceBsr {
                row_ptr: device_indices(&a.row_ptr),
                col_idx: device_indices(&a.col_idx),
                values: DeviceBuffer::from_host(Device::Cuda(0), &a.values).unwrap(),
            };
            let values = arrays.values.view(a.values.len().max(1), 1, 1, Layout::RowMajor).unwrap().as_ptr();
            // SAFETY: as above: the values are returned to the caller, which outlives the matrix.
            let matrix = unsafe { like.with_raw_values(values, Device::Cuda(0), true) }.unwrap();
            drop(like); // the structure lives on in `matrix`
            (matrix, Some(arrays))
        }
    }
}

struct Case {
    block: (usize, usize),
    transpose: bool,
    b_layout: Layout,
    c_layout: Layout,
    /// alpha, beta, bias, activation: the whole epilogue on device operands.
    epilogue: bool,
    source: Source,
    seed: u64,
}

fn gpu_case<T: Element>(gpu: &Context, case: &Case) {
    let mut rng = Rng::new(case.seed);
    let a = RandomBsr::<T>::new(&mut rng, 12, 10, case.block, 0.3);
    let (matrix, _device_arrays) = gpu_matrix(gpu, &a, case.source);
    assert_eq!(matrix.device(), Device::Cuda(0));
    let (m, k) = if case.transpose { (a.cols, a.rows) } else { (a.rows, a.cols) };
    let n = 40;
    let b: Vec<T> = (0..k * n).map(|_| T::from_f64(rng.value())).collect();
    let (alpha, beta, activation) = if case.epilogue { (0.75, -0.5, Activation::Gelu) } else { (1.0, 0.0, Activation::None) };
    let bias: Vec<T> = (0..m).map(|_| T::from_f64(rng.value())).collect();
    // Poisoned where beta = 0: every element the multiply misses stays NaN.
    let c0: Vec<T> = (0..m * n).map(|_| if case.epilogue { T::from_f64(rng.value()) } else { T::from_f64(f64::NAN) }).collect();

    let d_b = DeviceBuffer::from_host(Device::Cuda(0), &b).unwrap();
    let mut d_c = DeviceBuffer::from_host(Device::Cuda(0), &c0).unwrap();
    let d_bias = DeviceBuffer::from_host(Device::Cuda(0), &bias).unwrap();
    let mut options = MatmulOptions::new()
        .op(if case.transpose { Op::Transpose } else { Op::None })
        .alpha(alpha)
        .beta(beta)
        .activation(activation);
    if case.epilogue {
        options = options.bias(d_bias.view(m, 1, 1, Layout::RowMajor).unwrap());
    }
    let b_view = d_b.view(k, n, case.b_layout.min_ld(k, n), case.b_layout).unwrap();
    let c_view = d_c.view_mut(m, n, case.c_layout.min_ld(m, n), case.c_layout).unwrap();
    matmul_into(gpu, &matrix, b_view, c_view, &options).unwrap();
    gpu.synchronize().unwrap();
    let c = d_c.to_vec().unwrap();

    let (bl, cl) = (case.b_layout, case.c_layout);
    let bias_f64: Vec<f64> = bias.iter().map(|v| v.to_f64()).collect();
    let want = reference(
        &a.dense_f64(),
        a.rows,
        a.cols,
        case.transpose,
        |p, j| b[bl.offset(p, j, bl.min_ld(k, n))].to_f64(),
        n,
        alpha,
        beta,
        |i, j| c0[cl.offset(i, j, cl.min_ld(m, n))].to_f64(),
        case.epilogue.then_some(&bias_f64[..]),
        activation,
    );
    let what = format!(
        "gpu {:?} block {:?} transpose {} B {bl:?} C {cl:?} epilogue {} matrix {:?}",
        T::DTYPE,
        case.block,
        case.transpose,
        case.epilogue,
        case.source
    );
    check::<T>(&what, &want, |i, j| c[cl.offset(i, j, cl.min_ld(m, n))]);
    assert!(!gpu.last_variant().is_empty());
    // A borrowing matrix goes before the device arrays it reads.
    drop(matrix);
}

fn every_dtype(gpu: &Context, case: &Case) {
    gpu_case::<f32>(gpu, case);
    gpu_case::<f16>(gpu, case);
    gpu_case::<bf16>(gpu, case);
}

#[test]
fn gpu_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_matches_reference") else { return };
    for (i, block) in [(16, 16), (32, 32), (64, 64)].into_iter().enumerate() {
        for transpose in [false, true] {
            let seed = 900 + i as u64 * 2 + transpose as u64;
            let case = Case { block, transpose, b_layout: Layout::RowMajor, c_layout: Layout::RowMajor, epilogue: false, source: Source::HostCopy, seed };
            every_dtype(&gpu, &case);
        }
    }
}

#[test]
fn gpu_layouts_and_epilogue_on_device_operands() {
    let Some(gpu) = gpu_or_skip("gpu_layouts_and_epilogue_on_device_operands") else { return };
    let mut seed = 950;
    for (b_layout, c_layout) in [(Layout::ColMajor, Layout::RowMajor), (Layout::RowMajor, Layout::ColMajor), (Layout::ColMajor, Layout::ColMajor)] {
        for transpose in [false, true] {
            seed += 1;
            let case = Case { block: (32, 32), transpose, b_layout, c_layout, epilogue: true, source: Source::HostCopy, seed };
            every_dtype(&gpu, &case);
        }
    }
    // A rectangular block shape with the epilogue.
    let case = Case { block: (16, 32), transpose: false, b_layout: Layout::RowMajor, c_layout: Layout::RowMajor, epilogue: true, source: Source::HostCopy, seed: 970 };
    every_dtype(&gpu, &case);
}

#[test]
fn gpu_matrix_from_device_arrays_with_borrowed_values() {
    let Some(gpu) = gpu_or_skip("gpu_matrix_from_device_arrays_with_borrowed_values") else { return };
    for (i, transpose) in [false, true].into_iter().enumerate() {
        let case = Case { block: (64, 64), transpose, b_layout: Layout::RowMajor, c_layout: Layout::RowMajor, epilogue: i == 1, source: Source::DeviceBorrowed, seed: 980 + i as u64 };
        every_dtype(&gpu, &case);
    }
}

#[test]
fn gpu_matrix_sharing_a_structure_with_borrowed_values() {
    let Some(gpu) = gpu_or_skip("gpu_matrix_sharing_a_structure_with_borrowed_values") else { return };
    for (i, block) in [(16, 16), (64, 64)].into_iter().enumerate() {
        for transpose in [false, true] {
            let seed = 1000 + i as u64 * 2 + transpose as u64;
            let case = Case { block, transpose, b_layout: Layout::RowMajor, c_layout: Layout::RowMajor, epilogue: false, source: Source::SharedStructure, seed };
            every_dtype(&gpu, &case);
        }
    }
}

#[test]
fn gpu_host_data_round_trips_through_device_buffers() {
    let Some(_gpu) = gpu_or_skip("gpu_host_data_round_trips_through_device_buffers") else { return };
    let mut rng = Rng::new(990);
    let data: Vec<bf16> = (0..1000).map(|_| bf16::from_f64(rng.value())).collect();
    let buffer = DeviceBuffer::from_host(Device::Cuda(0), &data).unwrap();
    assert_eq!((buffer.len(), buffer.device()), (1000, Device::Cuda(0)));
    assert_eq!(buffer.to_vec().unwrap(), data);
    let mut short = vec![bf16::from_f64(0.0); 999];
    assert_eq!(buffer.copy_to_host(&mut short).unwrap_err().code(), "BSRMM_STATUS_INVALID_ARGUMENT");
}

/// The SDDMM with X, Y and the values in device buffers: X and Y in both layouts, padded, beta
/// = 0 over NaN-poisoned values and beta != 0, blocks from 16 (SIMT) to 128 (tensor cores).
fn gpu_sddmm_case<T: Element>(gpu: &Context, seed: u64, block: (usize, usize), t: usize, x_layout: Layout, y_layout: Layout, beta: f64) {
    let mut rng = Rng::new(seed);
    let a = RandomBsr::<T>::new(&mut rng, 3, 4, block, 0.5);
    let (matrix, _arrays) = gpu_matrix(gpu, &a, Source::HostCopy);
    let (bh, bw) = block;
    let nnzb = a.col_idx.len();
    let pad = 3;
    let fill = |rows: usize, cols: usize, layout: Layout, rng: &mut Rng| {
        let (mut data, ld) = common::strided::<T>(rows, cols, layout, pad, T::from_f64(f64::NAN));
        for i in 0..rows {
            for j in 0..cols {
                data[layout.offset(i, j, ld)] = T::from_f64(rng.value());
            }
        }
        (data, ld)
    };
    let (x, ld_x) = fill(a.rows, t, x_layout, &mut rng);
    let (y, ld_y) = fill(t, a.cols, y_layout, &mut rng);
    let values0: Vec<T> = (0..nnzb * bh * bw).map(|_| T::from_f64(if beta != 0.0 { rng.value() } else { f64::NAN })).collect();
    let (d_x, d_y) = (DeviceBuffer::from_host(Device::Cuda(0), &x).unwrap(), DeviceBuffer::from_host(Device::Cuda(0), &y).unwrap());
    let mut d_values = DeviceBuffer::from_host(Device::Cuda(0), &values0).unwrap();
    sddmm_into(
        gpu,
        &matrix,
        d_x.view(a.rows, t, ld_x, x_layout).unwrap(),
        d_y.view(t, a.cols, ld_y, y_layout).unwrap(),
        d_values.view_mut(nnzb, bh * bw, bh * bw, Layout::RowMajor).unwrap(),
        &SddmmOptions::new().alpha(-0.5).beta(beta),
    )
    .unwrap();
    gpu.synchronize().unwrap();
    let got = d_values.to_vec().unwrap();
    let at = |data: &[T], layout: Layout, ld: usize, i: usize, j: usize| data[layout.offset(i, j, ld)].to_f64();
    let want = sddmm_reference(&a, |i, p| at(&x, x_layout, ld_x, i, p), |p, j| at(&y, y_layout, ld_y, p, j), t, -0.5, beta, &values0);
    let what = format!("GPU {:?} sddmm blocks {block:?} t={t} X {x_layout:?} Y {y_layout:?} beta {beta}", T::DTYPE);
    check::<T>(&what, &want, |b, e| got[b * bh * bw + e]);
}

#[test]
fn gpu_sddmm_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_sddmm_matches_reference") else { return };
    let mut seed = 900;
    for (block, t) in [((16, 16), 40), ((32, 64), 72), ((64, 64), 128), ((128, 128), 64), ((3, 5), 9)] {
        for (x_layout, y_layout) in [(Layout::RowMajor, Layout::ColMajor), (Layout::ColMajor, Layout::RowMajor)] {
            let beta = if seed % 2 == 0 { 0.0 } else { 0.5 };
            gpu_sddmm_case::<f32>(&gpu, seed, block, t, x_layout, y_layout, beta);
            gpu_sddmm_case::<f16>(&gpu, seed + 1, block, t, x_layout, y_layout, beta);
            gpu_sddmm_case::<bf16>(&gpu, seed + 2, block, t, x_layout, y_layout, beta);
            gpu_sddmm_case::<f64>(&gpu, seed + 3, block, t, x_layout, y_layout, beta);
            seed += 5;
        }
    }
}

fn assert_invalid<T: std::fmt::Debug>(what: &str, result: bsrmm::Result<T>, needle: &str) {
    let err = result.expect_err(what);
    assert_eq!(err.code(), "BSRMM_STATUS_INVALID_ARGUMENT", "{what}: {err}");
    assert!(err.message().to_lowercase().contains(needle), "{what}: message {:?} should mention {needle:?}", err.message());
}

#[test]
fn gpu_errors_name_the_argument() {
    let Some(gpu) = gpu_or_skip("gpu_errors_name_the_argument") else { return };
    let cpu = Context::cpu().unwrap();
    let mut rng = Rng::new(995);
    let a = RandomBsr::<f16>::new(&mut rng, 4, 4, (16, 16), 0.5);
    let host_matrix = BsrMatrix::from_bsr(&cpu, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
    let gpu_matrix = host_matrix.copy_to(&gpu).unwrap();
    let (k, n) = (a.cols, 8);
    let b = vec![f16::from_f64(1.0); k * n];
    let mut c = vec![f16::from_f64(f64::NAN); a.rows * n];
    let d_b = DeviceBuffer::from_host(Device::Cuda(0), &b).unwrap();
    let mut d_c = DeviceBuffer::from_host(Device::Cuda(0), &c).unwrap();
    let options = MatmulOptions::new();

    // Host operands handed to a GPU multiply: the core refuses, naming the operand and devices.
    let host_b = DenseRef::packed(&b, k, n, Layout::RowMajor).unwrap();
    let d_c_view = d_c.view_mut(a.rows, n, n, Layout::RowMajor).unwrap();
    assert_invalid("host B on a GPU context", matmul_into(&gpu, &gpu_matrix, host_b, d_c_view, &options), "b is on");
    let host_c = DenseMut::packed(&mut c, a.rows, n, Layout::RowMajor).unwrap();
    assert_invalid("host C on a GPU context", matmul_into(&gpu, &gpu_matrix, d_b.view(k, n, n, Layout::RowMajor).unwrap(), host_c, &options), "c is on");
    // A matrix on the host with a GPU context, and a GPU matrix with the CPU context.
    let d_c_view = d_c.view_mut(a.rows, n, n, Layout::RowMajor).unwrap();
    assert_invalid("host matrix on a GPU context", matmul_into(&gpu, &host_matrix, d_b.view(k, n, n, Layout::RowMajor).unwrap(), d_c_view, &options), "a is on");
    let d_c_view = d_c.view_mut(a.rows, n, n, Layout::RowMajor).unwrap();
    assert_invalid("GPU operands on the CPU context", matmul_into(&cpu, &gpu_matrix, d_b.view(k, n, n, Layout::RowMajor).unwrap(), d_c_view, &options), "a is on");
    // A bias in host memory next to a device C.
    let bias = vec![f16::from_f64(0.0); a.rows];
    let d_c_view = d_c.view_mut(a.rows, n, n, Layout::RowMajor).unwrap();
    let with_host_bias = MatmulOptions::new().bias(DenseRef::vector(&bias));
    assert_invalid("host bias, device C", matmul_into(&gpu, &gpu_matrix, d_b.view(k, n, n, Layout::RowMajor).unwrap(), d_c_view, &with_host_bias), "bias");
    // Shapes are checked on the GPU path as on the CPU one.
    let d_c_view = d_c.view_mut(a.rows - 16, n, n, Layout::RowMajor).unwrap();
    assert_invalid("C with too few rows", matmul_into(&gpu, &gpu_matrix, d_b.view(k, n, n, Layout::RowMajor).unwrap(), d_c_view, &options), "");
    // Views must fit their buffer.
    assert_invalid("a view past the end", d_b.view(k, n + 1, n + 1, Layout::RowMajor), "does not fit");
    // Nothing above wrote C.
    assert!(d_c.to_vec().unwrap().iter().all(|v| v.to_f64().is_nan()));
    // A device that is not there.
    let err = DeviceBuffer::<f32>::new(Device::Cuda(4096), 16).unwrap_err();
    assert!(matches!(err.code(), "BSRMM_STATUS_NO_DEVICE" | "BSRMM_STATUS_CUDA_ERROR"), "{err}");
    assert!(Context::new(Device::Cuda(4096)).is_err());
}

/// An fp8 A (copied to the GPU with its scales) times an fp8 B on the device, B's per-column
/// scales in device memory (where the core reads them), C of `C` poisoned with NaN, against
/// float64 of the dequantised operands (the generic kernel accumulates in f32).
fn gpu_fp8_case<A: Fp8Element, B: Fp8Element, C: Element>(gpu: &Context, seed: u64, a_kind: ScaleKind, b_kind: ScaleKind) {
    let what = format!("GPU {:?} x {:?} -> {:?}, A {a_kind:?}, B {b_kind:?}", A::DTYPE, B::DTYPE, C::DTYPE);
    let mut rng = Rng::new(seed);
    let qa = common::fp8::quantise_a::<A>(&mut rng, a_kind);
    let (m, k, n) = (qa.bsr.rows, qa.bsr.cols, 6);
    let qb = common::fp8::quantise_b::<B>(&mut rng, k, n, b_kind);
    let cpu = Context::cpu().unwrap();
    let host = BsrMatrix::from_bsr_scaled(&cpu, m, k, qa.bsr.block, &qa.bsr.row_ptr, &qa.bsr.col_idx, &qa.bsr.values,
        common::fp8::scales_of(a_kind, &qa.scales), Default::default()).unwrap();
    let a = host.copy_to(gpu).unwrap();
    assert_eq!(a.scales().unwrap(), (a_kind, qa.scales.clone()), "{what}: the GPU copy keeps A's scales");
    let device = Device::Cuda(0);
    let d_b = DeviceBuffer::from_host(device, &qb.values).unwrap();
    let d_scales = DeviceBuffer::from_host(device, &qb.scales).unwrap();
    let mut d_c = DeviceBuffer::from_host(device, &vec![C::from_f64(f64::NAN); m * n]).unwrap();
    let scales_ptr = d_scales.view(qb.scales.len(), 1, qb.scales.len(), Layout::ColMajor).unwrap().as_ptr();
    // SAFETY: d_scales holds the scales on cuda:0 until after the synchronize below.
    let scales = unsafe { Scales::from_raw_parts(b_kind, scales_ptr, qb.scales.len(), device) };
    let options = MatmulOptions::<C>::new().b_scales(scales);
    matmul_fp8_into(gpu, &a, d_b.view(k, n, n, Layout::RowMajor).unwrap(), d_c.view_mut(m, n, m, Layout::ColMajor).unwrap(), &options)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    gpu.synchronize().unwrap();
    let c = d_c.to_vec().unwrap();
    let want = reference(&qa.dequantised, m, k, false, |p, j| qb.dequantised[p * n + j], n, 1.0, 0.0, |_, _| 0.0, None, Activation::None);
    let u_out = match C::DTYPE {
        bsrmm::DType::F32 => 2f64.powi(-24),
        _ => 2f64.powi(-8),
    };
    for i in 0..m {
        for j in 0..n {
            let (got, e) = (c[j * m + i].to_f64(), i * n + j);
            let bound = u_out * want.values[e].abs() + (k + 2) as f64 * 2f64.powi(-24) * want.magnitude[e];
            assert!((got - want.values[e]).abs() <= bound, "{what}: C[{i}][{j}] = {got}, reference {} (bound {bound})", want.values[e]);
        }
    }
}

#[test]
fn gpu_fp8_matches_the_dequantised_reference() {
    let Some(gpu) = gpu_or_skip("gpu_fp8_matches_the_dequantised_reference") else { return };
    for (i, a_kind) in [ScaleKind::PerBlock, ScaleKind::PerBlockRow, ScaleKind::PerTensor].into_iter().enumerate() {
        for (j, b_kind) in [ScaleKind::PerColumn, ScaleKind::PerTensor].into_iter().enumerate() {
            let seed = 40 + 10 * i as u64 + j as u64;
            gpu_fp8_case::<F8E4M3, F8E4M3, f32>(&gpu, seed, a_kind, b_kind);
            gpu_fp8_case::<F8E4M3, F8E5M2, bf16>(&gpu, seed + 100, a_kind, b_kind);
        }
    }
}

#[test]
fn gpu_fp8_refuses_host_per_column_scales() {
    let Some(gpu) = gpu_or_skip("gpu_fp8_refuses_host_per_column_scales") else { return };
    let cpu = Context::cpu().unwrap();
    let values = vec![F8E4M3::from_f64(1.0); 8];
    let a = BsrMatrix::from_bsr_scaled(&cpu, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 1], &values, Scales::per_tensor(1.0), Default::default())
        .unwrap()
        .copy_to(&gpu)
        .unwrap();
    let d_b = DeviceBuffer::from_host(Device::Cuda(0), &[F8E4M3::from_f64(1.0); 12]).unwrap();
    let mut d_c = DeviceBuffer::from_host(Device::Cuda(0), &[7.0f32; 12]).unwrap();
    let host_scales = [1.0f32; 3];
    let err = matmul_fp8_into(&gpu, &a, d_b.view(4, 3, 3, Layout::RowMajor).unwrap(), d_c.view_mut(4, 3, 3, Layout::RowMajor).unwrap(),
        &MatmulOptions::new().b_scales(Scales::per_column(&host_scales)))
    .expect_err("per-column scales in host memory on a GPU");
    assert_eq!(err.code(), "BSRMM_STATUS_UNSUPPORTED", "{err}");
    gpu.synchronize().unwrap();
    assert_eq!(d_c.to_vec().unwrap(), vec![7.0; 12], "C untouched");
}

#[test]
fn device_buffers_without_cuda_are_no_device() {
    if bsrmm::cuda_compiled() && bsrmm::cuda_device_count().is_ok_and(|n| n > 0) {
        eprintln!("SKIP device_buffers_without_cuda_are_no_device: a CUDA device is present");
        return;
    }
    let err = DeviceBuffer::<f32>::new(Device::Cuda(0), 16).unwrap_err();
    assert!(matches!(err.code(), "BSRMM_STATUS_NO_DEVICE" | "BSRMM_STATUS_CUDA_ERROR"), "{err}");
    assert_eq!(DeviceBuffer::<f32>::new(Device::Cpu, 16).unwrap_err().code(), "BSRMM_STATUS_INVALID_ARGUMENT");
}
