//! [`BsrLinear`]: a linear layer whose weight is block-sparse with a fixed pattern.

use burn::config::Config;
use burn::module::{Module, Param};
use burn::tensor::{Device, Distribution, Tensor};

use crate::pattern::BsrPattern;
use crate::prune::Keep;

/// The configuration of a [`BsrLinear`] layer, Burn's `Config` idiom: required fields in
/// `new`, the rest `with_*`, `init(&device)` builds the layer. Serialisable (the pattern as its
/// dims and index arrays).
///
/// ```
/// use burn::tensor::Device;
/// use burn_bsrmm::{BsrLinearConfig, BsrPattern};
///
/// let pattern = BsrPattern::from_block_fn(8, 16, (4, 4), |r, c| c / 2 == r)?;
/// let layer = BsrLinearConfig::new(pattern).with_bias(false).init(&Device::flex());
/// assert_eq!((layer.d_output(), layer.d_input()), (8, 16));
/// assert!(layer.bias.is_none());
/// # Ok::<(), bsrmm::Error>(())
/// ```
#[derive(Config, Debug)]
pub struct BsrLinearConfig {
    /// The block structure of W (`d_output x d_input`).
    pub pattern: BsrPattern,
    /// Whether the layer adds a bias.
    #[config(default = true)]
    pub bias: bool,
}

impl BsrLinearConfig {
    /// A layer with this configuration on `device`, initialised as [`BsrLinear::new`] does.
    pub fn init(&self, device: &Device) -> BsrLinear {
        BsrLinear::new(self.pattern.clone(), self.bias, device)
    }
}

/// `y = x W^T + b` with `W` (`d_output x d_input`) block-sparse: the pattern is fixed, the
/// block values are the trainable weights (`[nnzb, block_height, block_width]`), and the bias
/// (`[d_output]`) is optional. Build it with [`BsrLinearConfig`], [`BsrLinear::new`], or
/// [`BsrLinear::from_dense`] (pruning a dense weight).
///
/// Checkpoints (`save_file` / `load_file`, `into_record` / `load_record`) hold the pattern
/// beside the values (`pattern.shape`, `pattern.row_ptr`, `pattern.col_idx`, as integer
/// tensors): loading one restores the pattern it was saved with, so a layer built with another
/// pattern of the same nnzb computes the saved model, not its own pattern with the saved
/// values. A checkpoint of another matrix shape is refused, naming both patterns.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use burn_bsrmm::{BsrLinear, BsrPattern};
///
/// let device = Device::flex();
/// // 8 outputs, 16 inputs, 4x4 blocks, a block "band".
/// let pattern = BsrPattern::from_block_fn(8, 16, (4, 4), |r, c| c / 2 == r)?;
/// let layer = BsrLinear::new(pattern, true, &device);
/// let y = layer.forward(Tensor::<2>::ones([5, 16], &device));
/// assert_eq!(y.dims(), [5, 8]);
/// # Ok::<(), bsrmm::Error>(())
/// ```
#[derive(Module, Debug)]
pub struct BsrLinear {
    /// The stored blocks of W, initialised from U(-k, k) with k = 1 / sqrt(d_input).
    pub values: Param<Tensor<3>>,
    /// The bias, initialised like the values.
    pub bias: Option<Param<Tensor<1>>>,
    /// The block structure of W: fixed while training (no gradient), part of the record.
    pub pattern: BsrPattern,
}

impl BsrLinear {
    /// A layer with `pattern` as the structure of W (`d_output x d_input`).
    pub fn new(pattern: BsrPattern, bias: bool, device: &Device) -> Self {
        let k = 1.0 / (pattern.cols().max(1) as f64).sqrt();
        let init = Distribution::Uniform(-k, k);
        let values = Param::from_tensor(Tensor::random(pattern.values_shape(), init, device));
        let bias = bias.then(|| Param::from_tensor(Tensor::random([pattern.rows()], init, device)));
        BsrLinear { values, bias, pattern }
    }

    /// A layer from a dense weight `W` (`[d_output, d_input]`, the PyTorch convention; Burn's
    /// `Linear` stores `[d_input, d_output]`: pass its `weight.val().transpose()`), keeping the
    /// `block_shape` blocks that `keep` selects, with their values, and `bias` (`[d_output]`).
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor, TensorData};
    /// use burn_bsrmm::{BsrLinear, Keep};
    ///
    /// let device = Device::flex();
    /// // A 4x4 weight of 2x2 blocks; keep the largest half of the blocks.
    /// let w = Tensor::<2>::from_data(TensorData::new((0..16).map(|x| x as f32).collect::<Vec<_>>(), [4, 4]), &device);
    /// let layer = BsrLinear::from_dense(w, None, (2, 2), Keep::Density(0.5))?;
    /// assert_eq!(layer.pattern.col_idx(), &[0, 1]); // the bottom two blocks: rows 2-3
    /// assert_eq!(layer.pattern.row_ptr(), &[0, 0, 2]);
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn from_dense(weight: Tensor<2>, bias: Option<Tensor<1>>, block_shape: (usize, usize), keep: Keep<'_>) -> bsrmm::Result<Self> {
        let d_output = weight.dims()[0];
        if let Some(bias) = &bias
            && bias.dims() != [d_output]
        {
            return Err(bsrmm::Error::invalid_argument(format!(
                "bias has shape {:?}, the weight has d_output = {d_output} rows",
                bias.dims()
            )));
        }
        let (pattern, values) = BsrPattern::prune(weight, block_shape, keep)?;
        Ok(BsrLinear { values: Param::from_tensor(values), bias: bias.map(Param::from_tensor), pattern })
    }

    /// Input features (`d_input`).
    pub fn d_input(&self) -> usize {
        self.pattern.cols()
    }

    /// Output features (`d_output`).
    pub fn d_output(&self) -> usize {
        self.pattern.rows()
    }

    /// Applies the layer to `input` (`[..., d_input]`), giving `[..., d_output]`.
    ///
    /// # Panics
    /// When the last dimension of `input` is not `d_input`, as Burn's own layers do; use
    /// [`try_forward`](Self::try_forward) to get that as an error.
    pub fn forward<const D: usize>(&self, input: Tensor<D>) -> Tensor<D> {
        self.try_forward(input).unwrap_or_else(|e| panic!("BsrLinear: {e}"))
    }

    /// [`forward`](Self::forward), with bad input as `Err`.
    pub fn try_forward<const D: usize>(&self, input: Tensor<D>) -> bsrmm::Result<Tensor<D>> {
        let dims = input.dims();
        let d_input = dims[D - 1];
        if d_input != self.d_input() {
            return Err(bsrmm::Error::invalid_argument(format!(
                "input has {d_input} features in its last dimension, the layer takes {}",
                self.d_input()
            )));
        }
        let batch = dims[..D - 1].iter().product::<usize>();
        // y^T = W x^T: the batch becomes the dense operand's columns, and the bias, one value
        // per output feature, is a per-row bias of that product, which bsrmm adds in the
        // multiply's epilogue where the backend runs it (Flex; see `BsrBackend::bsr_matmul_bias`).
        let x = input.reshape([batch, d_input]).transpose();
        let y = match &self.bias {
            Some(bias) => crate::bsr_matmul_bias(&self.pattern, self.values.val(), x, bias.val(), false)?,
            None => crate::bsr_matmul(&self.pattern, self.values.val(), x, false)?,
        }
        .transpose();
        let mut out_dims = dims;
        out_dims[D - 1] = self.d_output();
        Ok(y.reshape(out_dims))
    }
}
