//! The fp8 multiply of the array form (issue 27): an fp8 A (its scales in the matrix) times an
//! fp8 B of `bDtype` with `bScales`, into C of `outDtype`. Dispatches the three dtypes, then
//! runs as `MatmulTask::run_typed` does (GPU operands through device buffers, B's per-column
//! scales too: the core reads them in place on the device).

use bsrmm::{bf16, f16, matmul_fp8_into, BsrMatrix, DType, DenseMut, DenseRef, Device, DeviceBuffer, Fp8Element, Layout, Op, Scales, F8E4M3, F8E5M2};

use crate::device;
use crate::dtype::{self, HostArray, JsElement};
use crate::error::{unsupported, IntoNapi};
use crate::tasks::matmul::MatmulTask;

impl MatmulTask<'_> {
    pub(crate) fn run_fp8<A: Fp8Element>(&self, a: &BsrMatrix<A>) -> napi::Result<HostArray> {
        match self.fp8.b_dtype.unwrap_or(A::DTYPE) {
            DType::F8E4M3 => self.run_fp8_b::<A, F8E4M3>(a),
            _ => self.run_fp8_b::<A, F8E5M2>(a),
        }
    }

    fn run_fp8_b<A: Fp8Element, B: Fp8Element>(&self, a: &BsrMatrix<A>) -> napi::Result<HostArray> {
        match self.fp8.out_dtype.unwrap_or(DType::F32) {
            DType::F32 => self.run_fp8_typed::<A, B, f32>(a),
            DType::F16 => self.run_fp8_typed::<A, B, f16>(a),
            DType::BF16 => self.run_fp8_typed::<A, B, bf16>(a),
            other => Err(unsupported(format!(
                "outDtype {}: an fp8 multiply writes C in \"f32\", \"f16\" or \"bf16\"",
                dtype::js_name(other)
            ))),
        }
    }

    fn run_fp8_typed<A: Fp8Element, B: Fp8Element, C: JsElement>(&self, a: &BsrMatrix<A>) -> napi::Result<HostArray> {
        let b = dtype::elements::<B>("b", &self.b)?;
        let bias = self.bias.as_deref().map(|bias| dtype::elements::<C>("bias", bias)).transpose()?;
        let m = if self.op == Op::Transpose { a.cols() } else { a.rows() };
        let mut c = self.initial_c::<C>(m)?;
        let (k, n) = (self.b_rows, self.b_cols);
        let device = a.device();
        let ctx = device::context(device)?;
        let options = self.options::<C>();
        if device == Device::Cpu {
            let options = match &bias {
                Some(bias) => options.bias(DenseRef::vector(bias)),
                None => options,
            };
            let options = match &self.fp8.b_scales {
                Some((kind, values)) => options.b_scales(Scales::new(*kind, values)),
                None => options,
            };
            let b_view = DenseRef::packed(&b, k, n, self.b_layout).napi()?;
            let c_view = DenseMut::packed(&mut c, m, n, self.out_layout).napi()?;
            matmul_fp8_into(&ctx, a, b_view, c_view, &options).napi()?;
        } else {
            let d_b = DeviceBuffer::from_host(device, &b).napi()?;
            let mut d_c = DeviceBuffer::from_host(device, &c).napi()?;
            let d_bias = bias.as_deref().map(|bias| DeviceBuffer::from_host(device, bias)).transpose().napi()?;
            let d_scales = self.fp8.b_scales.as_ref().map(|(_, v)| DeviceBuffer::from_host(device, v)).transpose().napi()?;
            let options = match &d_bias {
                Some(d_bias) => options.bias(d_bias.view(m, 1, 1, Layout::RowMajor).napi()?),
                None => options,
            };
            let options = match (&self.fp8.b_scales, &d_scales) {
                (Some((kind, values)), Some(d_scales)) => {
                    let ptr = d_scales.view(values.len(), 1, values.len().max(1), Layout::ColMajor).napi()?.as_ptr();
                    // SAFETY: d_scales holds values.len() f32 on A's device and outlives the
                    // multiply (synchronized below before it drops).
                    options.b_scales(unsafe { Scales::from_raw_parts(*kind, ptr, values.len(), device) })
                }
                _ => options,
            };
            let b_view = d_b.view(k, n, self.b_layout.min_ld(k, n).max(1), self.b_layout).napi()?;
            let c_view = d_c.view_mut(m, n, self.out_layout.min_ld(m, n).max(1), self.out_layout).napi()?;
            matmul_fp8_into(&ctx, a, b_view, c_view, &options).napi()?;
            ctx.synchronize().napi()?;
            d_c.copy_to_host(&mut c).napi()?;
        }
        Ok(C::wrap(c))
    }
}
