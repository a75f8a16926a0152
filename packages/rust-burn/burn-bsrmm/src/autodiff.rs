//! The op under Burn's autodiff: gradients for both inputs.
//!
//! With C = op(A) * B (A block-sparse, values V of shape [nnzb, bh, bw]):
//! - dB = op(A)^T * dC: the same op with the transpose flag flipped, so it runs on bsrmm too.
//! - dV keeps only the stored blocks of dA (an SDDMM). Block k at (r, c):
//!   no transpose: dV_k = dC[r-th bh rows] * B[c-th bw rows]^T
//!   transpose:    dV_k = B[r-th bh rows] * dC[c-th bw rows]^T
//!   Gathered with `select` and done as one batched matmul by the backend.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, TensorMetadata};
use burn::tensor::{Shape, TensorData};

use crate::BsrBackend;
use crate::pattern::BsrPattern;

impl<B: BsrBackend, C: CheckpointStrategy> BsrBackend for Autodiff<B, C> {
    fn bsr_matmul(
        values: FloatTensor<Self>,
        dense: FloatTensor<Self>,
        pattern: BsrPattern,
        transpose: bool,
    ) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct BsrMatmulBackward;

        impl<B: BsrBackend> Backward<B, 2> for BsrMatmulBackward {
            // (values checkpoint, dense checkpoint, pattern, transpose)
            type State = (Option<NodeId>, Option<NodeId>, BsrPattern, bool);

            fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let (values_id, dense_id, pattern, transpose) = ops.state;
                let [values_node, dense_node] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let values: Option<FloatTensor<B>> = values_id.map(|id| checkpointer.retrieve_node_output(id));
                let dense: Option<FloatTensor<B>> = dense_id.map(|id| checkpointer.retrieve_node_output(id));

                if let Some(node) = dense_node {
                    let values = values.expect("values are checkpointed when the dense input is tracked");
                    let grad_dense = B::bsr_matmul(values, grad.clone(), pattern.clone(), !transpose);
                    grads.register::<B>(node.id, grad_dense);
                }
                if let Some(node) = values_node {
                    let dense = dense.expect("the dense input is checkpointed when values are tracked");
                    grads.register::<B>(node.id, values_grad::<B>(grad, dense, &pattern, transpose));
                }
            }
        }

        let values_tracked = values.is_tracked();
        let dense_tracked = dense.is_tracked();
        match BsrMatmulBackward.prepare::<C>([values.node(), dense.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                // Each input's gradient needs the other input, never itself.
                let values_state = dense_tracked.then(|| prep.checkpoint(&values));
                let dense_state = values_tracked.then(|| prep.checkpoint(&dense));
                let output = B::bsr_matmul(values.into_primitive(), dense.into_primitive(), pattern.clone(), transpose);
                prep.finish((values_state, dense_state, pattern, transpose), output)
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::bsr_matmul(values.into_primitive(), dense.into_primitive(), pattern, transpose))
            }
        }
    }
}

/// dV for C = op(A) * B: the stored blocks of dA, as a `[nnzb, bh, bw]` tensor.
fn values_grad<B: Backend>(
    grad: FloatTensor<B>,
    dense: FloatTensor<B>,
    pattern: &BsrPattern,
    transpose: bool,
) -> FloatTensor<B> {
    let (bh, bw) = pattern.block_shape();
    let n = dense.shape()[1];
    let device = dense.device();
    let index = |idx: &[i64]| B::int_from_data(TensorData::new(idx.to_vec(), [idx.len()]), &device);
    // The operand whose rows line up with A's block rows, and the one with its block columns.
    let (by_row, by_col) = if transpose { (dense, grad) } else { (grad, dense) };
    let rows = B::float_select(
        B::float_reshape(by_row, Shape::new([pattern.block_rows(), bh, n])),
        0,
        index(pattern.block_row()),
    );
    let cols = B::float_select(
        B::float_reshape(by_col, Shape::new([pattern.block_cols(), bw, n])),
        0,
        index(pattern.col_idx()),
    );
    B::float_matmul(rows, B::float_swap_dims(cols, 1, 2))
}
