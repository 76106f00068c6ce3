#pragma once

// Contractions in every layout the matmul scheduler takes, shared by the CPU tier (each is
// accepted and compiles for sm_90a) and the GPU tier (each matches the reference evaluator):
// linear and matmul with each operand stored K-major or MN-major, and batched matmuls and
// linears (a batch on both operands, on one of them, a batch size of 1 that broadcasts).
// Every case's fusion takes A then B; inputs() builds them, stored as the fusion declares.

#include <memory>
#include <string>
#include <vector>

#include "braze/ops/contraction.h"
#include "braze/ops/shape.h"
#include "epilogue_cases.h"

namespace braze::test {

struct LayoutCase {
  std::string name;
  bool linear = false;      ///< linear(x, weight [N, K]); matmul(a, b [K, N]) otherwise
  bool a_mn_major = false;  ///< A stored with M innermost
  bool b_mn_major = false;  ///< B stored with N innermost
  int64_t a_batch = 0;      ///< A's leading batch size; 0: no batch dim
  int64_t b_batch = 0;
  /// Sizes of more batch dims in front of the batch dim (outermost first; 1: a broadcast).
  std::vector<int64_t> a_outer = {};
  std::vector<int64_t> b_outer = {};
  /// The fusion's input is the operand with its last two dims swapped (stored the same), and
  /// the fusion transposes it back before the contraction: x^T or W^T read in place.
  bool a_transposed = false;
  bool b_transposed = false;

  /// Sizes the kernel takes: an MN-major operand's K stride is M (N), a multiple of 8.
  bool accepts(int64_t m, int64_t n) const {
    return (!a_mn_major || m % 8 == 0) && (!b_mn_major || n % 8 == 0) && n % 2 == 0;
  }

  // A's or B's logical sizes (-1 symbolic, 1 a broadcast batch), which of its dims are K and
  // MN, and its allocation order (the MN dim innermost when MN-major).
  struct Operand {
    std::vector<int64_t> sizes;
    std::vector<int64_t> order;
  };
  /// `symbolic`: sizes as the definition declares them (-1, or 1 for a broadcast).
  Operand operand(bool is_a, int64_t batch_size, int64_t rows, int64_t k,
                  bool symbolic = false) const {
    const bool mn_major = is_a ? a_mn_major : b_mn_major;
    // B of matmul is [K, N]; A and linear's weight are [rows, K].
    const bool k_first = !is_a && !linear;
    std::vector<int64_t> sizes =
        k_first ? std::vector<int64_t>{k, rows} : std::vector<int64_t>{rows, k};
    const int64_t batch = is_a ? a_batch : b_batch;
    const int64_t mn_dim = k_first ? 1 : 0, k_dim = 1 - mn_dim;
    std::vector<int64_t> order = {mn_major ? k_dim : mn_dim, mn_major ? mn_dim : k_dim};
    if (batch > 0) {
      sizes.insert(sizes.begin(), batch_size);
      order = {0, order[0] + 1, order[1] + 1};
    }
    const std::vector<int64_t>& outer = is_a ? a_outer : b_outer;
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) {
      sizes.insert(sizes.begin(), symbolic && *it != 1 ? -1 : *it);
      for (int64_t& d : order) ++d;
      order.insert(order.begin(), 0);
    }
    return {std::move(sizes), std::move(order)};
  }

  // `shape` with its last two dims swapped: the input a transposed operand is read from.
  static Operand swappedLastTwo(Operand shape) {
    const auto rank = static_cast<int64_t>(shape.sizes.size());
    std::swap(shape.sizes[size_t(rank - 2)], shape.sizes[size_t(rank - 1)]);
    for (int64_t& d : shape.order) {
      if (d >= rank - 2) d = 2 * rank - 3 - d;
    }
    return shape;
  }

  std::unique_ptr<Fusion> build(DataType dtype) const {
    auto fusion = std::make_unique<Fusion>();
    const auto declare = [&](bool is_a) {
      const int64_t batch = is_a ? a_batch : b_batch;
      const bool transposed = is_a ? a_transposed : b_transposed;
      Operand shape = operand(is_a, batch == 1 ? 1 : -1, -1, -1, /*symbolic=*/true);
      if (transposed) shape = swappedLastTwo(std::move(shape));
      TensorView* input = makeInputTensor(
          *fusion, {.dtype = dtype, .sizes = shape.sizes, .allocation_order = shape.order});
      return transposed ? transpose(input, -2, -1) : input;
    };
    TensorView* a = declare(true);
    TensorView* b = declare(false);
    fusion->addOutput(linear ? braze::linear(a, b) : matmul(a, b));
    return fusion;
  }

  /// A and B for an m x n x k product with `batches` batches, stored as declared, their values
  /// exact (exactOperand) so that fp32 sums match the reference's.
  std::vector<HostTensor> inputs(RandomTensors& random, DataType dtype, int64_t batches, int64_t m,
                                 int64_t n, int64_t k) const {
    std::vector<HostTensor> tensors;
    for (const bool is_a : {true, false}) {
      const int64_t batch = is_a ? a_batch : b_batch;
      const Operand shape = operand(is_a, batch == 1 ? 1 : batches, is_a ? m : n, k);
      // Allocate in storage order, then view it in logical order.
      std::vector<int64_t> stored;
      for (const int64_t d : shape.order) stored.push_back(shape.sizes[size_t(d)]);
      std::vector<int64_t> to_logical(shape.order.size());
      for (size_t i = 0; i < shape.order.size(); ++i)
        to_logical[size_t(shape.order[i])] = int64_t(i);
      HostTensor tensor = exactOperand(random, dtype, stored).permuted(to_logical);
      if (is_a ? a_transposed : b_transposed) {
        // The input whose transpose is this operand: the same storage, last two dims swapped.
        std::vector<int64_t> swap(shape.order.size());
        for (size_t d = 0; d < swap.size(); ++d) swap[d] = int64_t(d);
        std::swap(swap[swap.size() - 2], swap[swap.size() - 1]);
        tensor = tensor.permuted(swap);
      }
      tensors.push_back(std::move(tensor));
    }
    return tensors;
  }
};

inline std::vector<LayoutCase> layoutCases() {
  return {
      {.name = "linear_x_column_major", .linear = true, .a_mn_major = true},
      {.name = "linear_weight_n_major", .linear = true, .b_mn_major = true},
      {.name = "linear_both_mn_major", .linear = true, .a_mn_major = true, .b_mn_major = true},
      {.name = "linear_batched_x", .linear = true, .a_batch = 3},
      {.name = "matmul_row_major", .b_mn_major = true},
      {.name = "matmul_b_column_major"},
      {.name = "matmul_a_column_major", .a_mn_major = true, .b_mn_major = true},
      {.name = "matmul_both_column_major", .a_mn_major = true},
      {.name = "matmul_batched", .b_mn_major = true, .a_batch = 3, .b_batch = 3},
      {.name = "matmul_batched_a_shared_b", .b_mn_major = true, .a_batch = 3},
      {.name = "matmul_shared_a_batched_b", .a_mn_major = true, .b_batch = 2},
      {.name = "matmul_b_batch_of_one", .b_mn_major = true, .a_batch = 2, .b_batch = 1},
      // Several batch dims ([B, H, M, K] by [B, H, K, N] as in attention), broadcast too.
      {.name = "matmul_two_batch_dims",
       .b_mn_major = true,
       .a_batch = 3,
       .b_batch = 3,
       .a_outer = {2},
       .b_outer = {2}},
      {.name = "matmul_b_shared_over_outer_dim", .a_batch = 3, .b_batch = 3, .a_outer = {2}},
      {.name = "matmul_three_batch_dims_outer_of_one",
       .a_mn_major = true,
       .b_mn_major = true,
       .a_batch = 2,
       .b_batch = 2,
       .a_outer = {2, 3},
       .b_outer = {1, 3}},
      {.name = "linear_two_batch_dims", .linear = true, .a_batch = 3, .a_outer = {2}},
      // Transposed inputs read in place: dy @ w^T and act^T @ dy of an MLP's backward.
      {.name = "matmul_b_transposed_row_major_weight", .b_transposed = true},
      {.name = "matmul_a_transposed_row_major_activation",
       .a_mn_major = true,
       .b_mn_major = true,
       .a_transposed = true},
      {.name = "matmul_both_transposed", .a_transposed = true, .b_transposed = true},
      {.name = "matmul_both_transposed_batched",
       .a_mn_major = true,
       .b_mn_major = true,
       .a_batch = 3,
       .b_batch = 3,
       .a_transposed = true,
       .b_transposed = true},
      {.name = "linear_x_transposed", .linear = true, .a_transposed = true},
      {.name = "linear_weight_transposed", .linear = true, .b_transposed = true},
  };
}

}  // namespace braze::test
