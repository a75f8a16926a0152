//! [`BsrLinear`]: a linear layer whose weight is block-sparse with a fixed pattern.

use burn::module::{Module, Param};
use burn::tensor::{Device, Distribution, Tensor};

use crate::pattern::BsrPattern;

/// `y = x W^T + b` with `W` (`d_output x d_input`) block-sparse: the pattern is fixed, the
/// block values are the trainable weights (`[nnzb, block_height, block_width]`), and the bias
/// (`[d_output]`) is optional.
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
    /// The block structure of W; fixed, so not a parameter.
    #[module(skip)]
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
        // y^T = W x^T: the batch becomes the dense operand's columns.
        let x = input.reshape([batch, d_input]).transpose();
        let y = crate::bsr_matmul(&self.pattern, self.values.val(), x, false)?.transpose();
        let y = match &self.bias {
            Some(bias) => y + bias.val().unsqueeze_dim(0),
            None => y,
        };
        let mut out_dims = dims;
        out_dims[D - 1] = self.d_output();
        Ok(y.reshape(out_dims))
    }
}
