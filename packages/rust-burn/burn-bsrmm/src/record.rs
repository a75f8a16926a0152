//! The pattern in module records: a `BsrPattern` field of a Burn module is a module whose
//! parameters are its arrays, so `save_file` stores the structure beside the values and loading
//! a checkpoint restores it.
//!
//! Burn 0.22 records hold a module's tensor parameters by path. The pattern presents three
//! integer parameters under its field (e.g. `hidden.pattern.shape`, `.row_ptr`, `.col_idx`),
//! built lazily from its arrays on the host: a record reads them, an optimizer step (which maps
//! float parameters only) never builds them. When a record replaces them on load, the loaded
//! arrays become the pattern (validated again); arrays of other lengths than the module's are
//! Burn's own shape-mismatch error, and a record of another matrix shape (rows, cols, block
//! shape) is refused naming both patterns.

use burn::module::{
    Content, Devices, Module, ModuleDisplay, ModuleDisplayDefault, ModuleMapper, ModuleVisitor, Param,
};
use burn::tensor::{Device, Int, Shape, Tensor, TensorData};

use crate::pattern::{BsrPattern, RecordIds};

/// The parameter names under the pattern's field, in record order.
const NAMES: [&str; 3] = ["shape", "row_ptr", "col_idx"];
const CONTAINER: &str = "Struct:BsrPattern";

impl BsrPattern {
    /// `[rows, cols, block_height, block_width]`, `row_ptr`, `col_idx`.
    fn record_arrays(&self) -> [Vec<i64>; 3] {
        let (bh, bw) = self.block_shape();
        let shape = [self.rows(), self.cols(), bh, bw].map(|d| d as i64).to_vec();
        [shape, self.row_ptr().to_vec(), self.col_idx().to_vec()]
    }

    /// The three parameters, unmaterialised: nothing is copied until a visitor reads them.
    fn record_params(&self) -> [Param<Tensor<1, Int>>; 3] {
        let lens = [4, self.row_ptr().len(), self.col_idx().len()];
        [0, 1, 2].map(|i| {
            let pattern = self.clone();
            let init = move |device: &Device, _: bool| {
                let array = pattern.record_arrays()[i].clone();
                let len = array.len();
                Tensor::<1, Int>::from_data(TensorData::new(array, [len]), device)
            };
            // The host (Flex) device: the arrays are host data wherever the values live.
            Param::uninitialized(self.record_ids()[i], init, Device::flex(), false, Shape::new([lens[i]]))
        })
    }

    /// The pattern a record's arrays describe, or `None` when they are this pattern's.
    fn loaded(&self, params: [Param<Tensor<1, Int>>; 3]) -> Option<BsrPattern> {
        // A mapper that loads replaces a lazy parameter with a materialised one. Unless all
        // three were loaded (a record without the pattern, or with arrays of other lengths,
        // which Burn reports as missing or mismatched), the pattern stays as it is.
        if !params.iter().all(|p| p.is_initialized()) {
            return None;
        }
        let ids = params.each_ref().map(|p| p.id);
        let arrays = params.map(|p| {
            p.val().try_to_vec_as::<i64>().unwrap_or_else(|e| panic!("burn-bsrmm: reading a BsrPattern record failed: {e:?}"))
        });
        if arrays == self.record_arrays() {
            return None;
        }
        let [shape, row_ptr, col_idx] = arrays;
        let (bh, bw) = self.block_shape();
        let mine = [self.rows(), self.cols(), bh, bw].map(|d| d as i64);
        if shape != mine {
            // Burn's mapper has no error channel besides tensor shapes: this panics like
            // `load_record` does on a shape mismatch (`try_load_record` cannot return it).
            panic!(
                "burn-bsrmm: the record's BsrPattern is {shape:?} ([rows, cols, block_height, block_width]), \
                 this module's is {self} ({mine:?}): build the module with the record's shape before loading it"
            );
        }
        let pattern = BsrPattern::with_record_ids(self.rows(), self.cols(), (bh, bw), row_ptr, col_idx, RecordIds(ids))
            .unwrap_or_else(|e| panic!("burn-bsrmm: the record's BsrPattern is not a valid pattern: {e}"));
        Some(pattern)
    }
}

impl Module for BsrPattern {
    fn visit<V: ModuleVisitor>(&self, visitor: &mut V) {
        for (name, param) in NAMES.into_iter().zip(self.record_params()) {
            visitor.enter_module(name, CONTAINER);
            visitor.visit_int(&param);
            visitor.exit_module(name, CONTAINER);
        }
    }

    fn map<M: ModuleMapper>(self, mapper: &mut M) -> Self {
        let mut params = self.record_params().into_iter();
        let params = NAMES.map(|name| {
            let param = params.next().expect("one parameter per name");
            mapper.enter_module(name, CONTAINER);
            let param = mapper.map_int(param);
            mapper.exit_module(name, CONTAINER);
            param
        });
        self.loaded(params).unwrap_or(self)
    }

    // The pattern is host data used by every device: moving a module moves only its tensors.
    fn collect_devices(&self, devices: Devices) -> Devices {
        devices
    }
    fn to_device(self, _: &Device) -> Self {
        self
    }
    fn fork(self, _: &Device) -> Self {
        self
    }
    fn materialize(self) -> Self {
        self
    }
    fn valid(&self) -> Self {
        self.clone()
    }
    fn train(self) -> Self {
        self
    }
}

impl ModuleDisplayDefault for BsrPattern {
    fn content(&self, content: Content) -> Option<Content> {
        content.add_formatted(self).optional()
    }
}

impl ModuleDisplay for BsrPattern {}
