//! A small Burn model with BsrLinear layers trains: its loss falls.

use burn::tensor::{Device, Tensor};
use burn_bsrmm::{BsrLinear, BsrPattern};

mod common;

#[test]
fn bsr_linear_model_loss_decreases() {
    let losses = common::train_mlp(&Device::flex().autodiff());
    let (first, last) = (losses[0], *losses.last().unwrap());
    eprintln!("BsrLinear MLP loss: {first:.5} -> {last:.5}");
    assert!(last.is_finite() && last < 0.25 * first, "loss did not fall enough: {losses:?}");
}

#[test]
fn forward_rejects_the_wrong_width() {
    let device = Device::flex();
    let layer = BsrLinear::new(BsrPattern::from_block_fn(8, 16, (4, 4), |_, _| true).unwrap(), false, &device);
    let err = layer.try_forward(Tensor::<2>::ones([3, 12], &device)).unwrap_err();
    assert!(err.message().contains("12 features"), "{err}");
    // Batched input of any rank.
    assert_eq!(layer.forward(Tensor::<3>::ones([2, 3, 16], &device)).dims(), [2, 3, 8]);
}
