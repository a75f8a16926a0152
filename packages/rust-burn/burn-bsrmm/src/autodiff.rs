//! The op under Burn's autodiff: gradients for every input.
//!
//! With C = op(A) * B (+ bias) (A block-sparse, values V of shape [nnzb, bh, bw]):
//! - dBias = dC summed over its columns (the bias is added to each column of C).
//! - dB = op(A)^T * dC: the same op with the transpose flag flipped, so it runs on bsrmm too.
//! - dV keeps only the stored blocks of dA: the backend's SDDMM (`bsr_sddmm`), which reads dC
//!   and B in place (B^T and dC^T are transposed views) and computes nothing but those blocks:
//!   no transpose: dA = dC B^T    transpose: dA = B dC^T
//!
//! The SDDMM itself, V = (X Y)[stored blocks], is differentiable too, through the multiply:
//! dX = A_dV Y^T and dY = X^T A_dV = (A_dV^T X)^T, with A_dV the pattern holding dV.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::FloatTensor;
use burn::backend::TensorMetadata;
use burn::tensor::Shape;

use crate::BsrBackend;
use crate::pattern::BsrPattern;

/// What the backward pass of the multiply keeps: the checkpoints of the values and the dense
/// input (each gradient needs the other input, never itself), the pattern and the transpose.
type State = (Option<NodeId>, Option<NodeId>, BsrPattern, bool);

/// Registers dV and dB for C = op(A) * B (+ bias) from dC = `grad`, for the values and dense
/// nodes that are tracked.
fn matmul_grads<B: BsrBackend>(
    state: State,
    [values_node, dense_node]: [Option<NodeId>; 2],
    grad: FloatTensor<B>,
    grads: &mut Gradients,
    checkpointer: &mut Checkpointer,
) {
    let (values_id, dense_id, pattern, transpose) = state;
    let values: Option<FloatTensor<B>> = values_id.map(|id| checkpointer.retrieve_node_output(id));
    let dense: Option<FloatTensor<B>> = dense_id.map(|id| checkpointer.retrieve_node_output(id));
    if let Some(node) = dense_node {
        let values = values.expect("values are checkpointed when the dense input is tracked");
        let grad_dense = B::bsr_matmul(values, grad.clone(), pattern.clone(), !transpose);
        grads.register::<B>(node, grad_dense);
    }
    if let Some(node) = values_node {
        let dense = dense.expect("the dense input is checkpointed when values are tracked");
        grads.register::<B>(node, values_grad::<B>(grad, dense, &pattern, transpose));
    }
}

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
            type State = State;

            fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let grad = grads.consume::<B>(&ops.node);
                let parents = ops.parents.map(|node| node.map(|node| node.id));
                matmul_grads::<B>(ops.state, parents, grad, grads, checkpointer);
            }
        }

        let values_tracked = values.is_tracked();
        let dense_tracked = dense.is_tracked();
        match BsrMatmulBackward.prepare::<C>([values.node(), dense.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
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

    fn bsr_sddmm(x: FloatTensor<Self>, y: FloatTensor<Self>, pattern: BsrPattern) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct BsrSddmmBackward;

        impl<B: BsrBackend> Backward<B, 2> for BsrSddmmBackward {
            /// The checkpoints of x and y (each gradient needs the other operand) and the pattern.
            type State = (Option<NodeId>, Option<NodeId>, BsrPattern);

            fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let grad = grads.consume::<B>(&ops.node);
                let [x_node, y_node] = ops.parents;
                let (x_id, y_id, pattern) = ops.state;
                let x: Option<FloatTensor<B>> = x_id.map(|id| checkpointer.retrieve_node_output(id));
                let y: Option<FloatTensor<B>> = y_id.map(|id| checkpointer.retrieve_node_output(id));
                if let Some(node) = x_node {
                    let y = y.expect("y is checkpointed when x is tracked");
                    grads.register::<B>(node.id, B::bsr_matmul(grad.clone(), B::float_swap_dims(y, 0, 1), pattern.clone(), false));
                }
                if let Some(node) = y_node {
                    let x = x.expect("x is checkpointed when y is tracked");
                    grads.register::<B>(node.id, B::float_swap_dims(B::bsr_matmul(grad, x, pattern, true), 0, 1));
                }
            }
        }

        let (x_tracked, y_tracked) = (x.is_tracked(), y.is_tracked());
        match BsrSddmmBackward.prepare::<C>([x.node(), y.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let x_state = y_tracked.then(|| prep.checkpoint(&x));
                let y_state = x_tracked.then(|| prep.checkpoint(&y));
                let output = B::bsr_sddmm(x.into_primitive(), y.into_primitive(), pattern.clone());
                prep.finish((x_state, y_state, pattern), output)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::bsr_sddmm(x.into_primitive(), y.into_primitive(), pattern)),
        }
    }

    /// Fused forward (the inner backend's `bsr_matmul_bias`); backward as `bsr_matmul`, plus
    /// dBias = the sum of dC over its columns.
    fn bsr_matmul_bias(
        values: FloatTensor<Self>,
        dense: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        pattern: BsrPattern,
        transpose: bool,
    ) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct BsrMatmulBiasBackward;

        impl<B: BsrBackend> Backward<B, 3> for BsrMatmulBiasBackward {
            type State = State;

            fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let [values_node, dense_node, bias_node] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                if let Some(node) = bias_node {
                    let rows = grad.shape()[0];
                    grads.register::<B>(node.id, B::float_reshape(B::float_sum_dim(grad.clone(), 1), Shape::new([rows])));
                }
                let parents = [values_node, dense_node].map(|node| node.map(|node| node.id));
                matmul_grads::<B>(ops.state, parents, grad, grads, checkpointer);
            }
        }

        let values_tracked = values.is_tracked();
        let dense_tracked = dense.is_tracked();
        match BsrMatmulBiasBackward.prepare::<C>([values.node(), dense.node(), bias.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let values_state = dense_tracked.then(|| prep.checkpoint(&values));
                let dense_state = values_tracked.then(|| prep.checkpoint(&dense));
                let output = B::bsr_matmul_bias(
                    values.into_primitive(),
                    dense.into_primitive(),
                    bias.into_primitive(),
                    pattern.clone(),
                    transpose,
                );
                prep.finish((values_state, dense_state, pattern, transpose), output)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::bsr_matmul_bias(
                values.into_primitive(),
                dense.into_primitive(),
                bias.into_primitive(),
                pattern,
                transpose,
            )),
        }
    }
}

/// dV for C = op(A) * B: the stored blocks of dA, as a `[nnzb, bh, bw]` tensor, by the SDDMM.
fn values_grad<B: BsrBackend>(grad: FloatTensor<B>, dense: FloatTensor<B>, pattern: &BsrPattern, transpose: bool) -> FloatTensor<B> {
    if transpose {
        B::bsr_sddmm(dense, B::float_swap_dims(grad, 0, 1), pattern.clone())
    } else {
        B::bsr_sddmm(grad, B::float_swap_dims(dense, 0, 1), pattern.clone())
    }
}
