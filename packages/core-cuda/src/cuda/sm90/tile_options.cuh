// The options a kernel family's config is spelled with: named tags instead of positional
// booleans, in any order, each setting one field of the family's shape (RowTileShape,
// TransposedShape), e.g. RowTileConfig<Block<64, 32>, NTile<256>, PingPong>. C++17 has no
// class-type template parameters (RowTileConfig{.block = ..., .schedule = ...}), so the tags
// carry the values and shape_of folds them over the family's defaults at compile time.
#pragma once

namespace bsrmm::cuda::sm90 {

enum class Layout { RowMajor, ColMajor };

// Who computes a row tile: both consumer warpgroups share each tile (SplitTile), or each
// takes whole tiles in turn with their main loops ordered (PingPong).
enum class Schedule { SplitTile, PingPong };

// Blocks Height x Width (square when Width is left out).
template <int Height, int Width = Height>
struct Block {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.block_height = Height;
    shape.block_width = Width;
  }
};

// Columns of C per tile (row tiles).
template <int Columns>
struct NTile {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.n_tile = Columns;
  }
};

// CTAs per thread-block cluster (row tiles: a pair shares A by multicast).
template <int Ctas>
struct Cluster {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.cluster = Ctas;
  }
};

struct PingPong {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.schedule = Schedule::PingPong;
  }
};

// B column-major (read K-major through a map over B^T).
struct BColMajor {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.b_layout = Layout::ColMajor;
  }
};

// C column-major (tiles staged transposed, stored through a map over C^T).
struct CColMajor {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.c_layout = Layout::ColMajor;
  }
};

// Row tiles: A and B in fp8 (1-byte elements; RowTileTypes of Fp8Operands). Stages then hold a
// block's whole width (64 or 128 bytes of K), B comes K-major (with BColMajor) and a consumer
// keeps its tile's sum and one block's product apart, to scale each block (row_tile_mainloop.cuh).
struct Fp8Elements {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.element_bytes = 1;
  }
};

// C rows per tile (transposed tiles).
template <int Count>
struct Rows {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.rows = Count;
  }
};

// Transposed tiles: wgmma by block row instead of by 64-row unit.
struct ByRow {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.by_row = true;
  }
};

// Transposed tiles: blocks a larger multiple of their height wide (the width is the call's).
struct WideBlocks {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.wide = true;
  }
};

// The family's defaults with each option applied.
template <typename Shape, typename... Options>
constexpr Shape shape_of() {
  Shape shape{};
  (Options::template apply<Shape>(shape), ...);
  return shape;
}

}  // namespace bsrmm::cuda::sm90
