//! A small Burn model with BsrLinear layers trains: its loss falls.

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{activation, Device, Distribution, Tensor};
use burn_bsrmm::{BsrLinear, BsrPattern};

#[derive(Module, Debug)]
struct Mlp {
    hidden: BsrLinear,
    out: BsrLinear,
}

impl Mlp {
    fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.out.forward(activation::relu(self.hidden.forward(x)))
    }
}

#[test]
fn bsr_linear_model_loss_decreases() {
    let device = Device::flex().autodiff();
    // 32 -> 64 -> 8, 8x8 blocks, a band plus the diagonal of blocks.
    let hidden = BsrPattern::from_block_fn(64, 32, (8, 8), |r, c| r / 2 == c || r % 4 == c).unwrap();
    let out = BsrPattern::from_block_fn(8, 64, (8, 8), |_, c| c % 2 == 0).unwrap();
    let mut model = Mlp { hidden: BsrLinear::new(hidden, true, &device), out: BsrLinear::new(out, true, &device) };

    // A fixed random linear teacher gives the targets.
    let x = Tensor::<2>::random([128, 32], Distribution::Uniform(-1.0, 1.0), &device);
    let teacher = Tensor::<2>::random([32, 8], Distribution::Uniform(-0.5, 0.5), &device);
    let y = x.clone().matmul(teacher).detach();

    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::new();
    for _ in 0..60 {
        let loss = (model.forward(x.clone()) - y.clone()).powf_scalar(2.0).mean();
        losses.push(loss.clone().into_scalar::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
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
