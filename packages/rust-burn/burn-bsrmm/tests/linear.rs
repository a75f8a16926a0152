//! A small Burn model with BsrLinear layers trains: its loss falls.

use burn::config::Config;
use burn::module::Module;
use burn::tensor::{Device, Tensor, TensorData};
use burn_bsrmm::{BsrLinear, BsrLinearConfig, BsrPattern, Keep};

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

/// A 16-output, 32-input layer of 8x8 blocks: two block rows, four blocks each, chosen by `cols`.
fn layer(cols: [[usize; 2]; 2], d_input: usize, device: &Device) -> BsrLinear {
    let pattern = BsrPattern::from_block_fn(16, d_input, (8, 8), |r, c| cols[r].contains(&c)).unwrap();
    BsrLinearConfig::new(pattern).init(device)
}

fn output(layer: &BsrLinear, device: &Device) -> Vec<f32> {
    let x = Tensor::<2>::from_data(TensorData::new((0..3 * layer.d_input()).map(|i| (i % 7) as f32 - 3.0).collect::<Vec<_>>(), [3, layer.d_input()]), device);
    layer.forward(x).into_data().try_to_vec::<f32>().unwrap()
}

fn temp_file(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("burn-bsrmm-{}-{name}.bpk", std::process::id()))
}

#[test]
fn a_checkpoint_restores_the_pattern_it_was_saved_with() {
    let device = Device::flex();
    let saved = layer([[0, 2], [1, 3]], 32, &device);
    let want = output(&saved, &device);
    let path = temp_file("pattern");
    saved.clone().save_file(&path).unwrap();
    // Same nnzb, other blocks: before the pattern was recorded this loaded the values into the
    // other pattern and computed another model.
    let other = layer([[1, 3], [0, 2]], 32, &device);
    assert_ne!(other.pattern, saved.pattern);
    let loaded = other.try_load_file(&path).unwrap();
    assert_eq!(loaded.pattern, saved.pattern);
    assert_eq!(output(&loaded, &device), want);
    // Burn maps the file's tensors lazily: it is removed once they have been read.
    std::fs::remove_file(&path).unwrap();
    // In memory, through a record, and into a layer with the same pattern (nothing rebuilt).
    let again = layer([[0, 2], [1, 3]], 32, &device).load_record(saved.clone().into_record());
    assert_eq!(output(&again, &device), want);
}

#[test]
fn a_checkpoint_of_another_shape_is_refused_naming_both_patterns() {
    let device = Device::flex();
    let saved = layer([[0, 2], [1, 3]], 32, &device);
    let record = || saved.clone().into_record();
    // Another d_input with the same block rows and nnzb: only the pattern tells them apart.
    let wider = layer([[0, 2], [1, 3]], 64, &device);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wider.load_record(record()))).unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("[16, 32, 8, 8]") && message.contains("16x64, 8x8 blocks, 4 of 16 stored"), "{message}");
    // Another nnzb: Burn's own shape check, as an error.
    let pattern = BsrPattern::from_block_fn(16, 32, (8, 8), |r, c| r == 0 || c == 0).unwrap();
    let err = BsrLinearConfig::new(pattern).init(&device).try_load_record(record()).unwrap_err();
    assert!(err.to_string().contains("shape mismatch"), "{err}");
}

#[test]
fn the_config_builds_and_serialises_the_layer() {
    let device = Device::flex();
    let pattern = BsrPattern::from_block_fn(8, 16, (4, 4), |r, c| c / 2 == r).unwrap();
    let config = BsrLinearConfig::new(pattern.clone()).with_bias(false);
    let layer = config.init(&device);
    assert!(layer.bias.is_none());
    assert_eq!(layer.pattern, pattern);
    let path = temp_file("config");
    config.save(&path).unwrap();
    let read = BsrLinearConfig::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!((read.pattern, read.bias), (pattern, false));
    // A broken pattern in a config file is an error, not a layer.
    let broken = r#"{"pattern":{"rows":8,"cols":16,"block_shape":[4,4],"row_ptr":[0,2,1],"col_idx":[0,1]},"bias":true}"#;
    let err = BsrLinearConfig::load_binary(broken.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("row_ptr"), "{err}");
}

#[test]
fn pruning_a_dense_weight_keeps_the_largest_blocks_or_a_mask() {
    let device = Device::flex();
    // 4x6 of 2x3 blocks with block norms growing along row-major block order.
    let w: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let weight = Tensor::<2>::from_data(TensorData::new(w.clone(), [4, 6]), &device);
    let layer = BsrLinear::from_dense(weight.clone(), Some(Tensor::<1>::ones([4], &device)), (2, 3), Keep::Density(0.5)).unwrap();
    assert_eq!((layer.pattern.row_ptr(), layer.pattern.col_idx()), (&[0i64, 0, 2][..], &[0i64, 1][..]));
    // The kept values are the weight's blocks: layer(x) = W' x + 1 with the top block row zeroed.
    let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32; 6], [1, 6]), &device);
    let y = layer.forward(x).into_data().try_to_vec::<f32>().unwrap();
    let row_sum = |r: usize| w[r * 6..r * 6 + 6].iter().sum::<f32>() + 1.0;
    assert_eq!(y, vec![1.0, 1.0, row_sum(2), row_sum(3)]);

    let mask = [true, false, false, true];
    let (pattern, values) = BsrPattern::prune(weight.clone(), (2, 3), Keep::Mask(&mask)).unwrap();
    assert_eq!((pattern.col_idx(), values.dims()), (&[0i64, 1][..], [2, 2, 3]));
    assert_eq!(values.into_data().try_to_vec::<f32>().unwrap(), vec![0., 1., 2., 6., 7., 8., 15., 16., 17., 21., 22., 23.]);
    assert_eq!(BsrPattern::prune(weight.clone(), (2, 3), Keep::Density(0.0)).unwrap().0.nnzb(), 0);

    for (keep, needle) in [(Keep::Mask(&[true; 3]), "mask has 3 entries"), (Keep::Density(1.5), "density = 1.5")] {
        let err = BsrPattern::prune(weight.clone(), (2, 3), keep).unwrap_err();
        assert!(err.message().contains(needle), "{err}");
    }
    assert!(BsrPattern::prune(weight, (3, 3), Keep::Density(1.0)).unwrap_err().message().contains("does not divide"));
}
