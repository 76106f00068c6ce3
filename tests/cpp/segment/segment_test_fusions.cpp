#include "segment/segment_test_fusions.h"

#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/fusion_of.h"
#include "support/normalization_fusions.h"

namespace braze::test {

namespace {

std::vector<SegmentCase> makeCases() {
  std::vector<SegmentCase> cases;
  for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
    cases.push_back({"layer_norm_bwd_" + std::string(toString(dtype)),
                     [dtype] { return makeNormalization(Normalization::LayerNormBackward, dtype); },
                     normalizationInputSizes(Normalization::LayerNormBackward, 5, 12)});
  }
  cases.push_back(
      {"rms_norm_bwd",
       [] { return makeNormalization(Normalization::RmsNormBackward, DataType::Float32); },
       normalizationInputSizes(Normalization::RmsNormBackward, 6, 10)});
  // gelu(softmax(x) * w)
  cases.push_back({"softmax_gelu",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 2);
                     TensorView* w = makeSymbolicTensor(f, 1);
                     TensorView* e = exp(sub(x, max(x, {1}, /*keepdim=*/true)));
                     TensorView* softmax = div(e, sum(e, {1}, /*keepdim=*/true));
                     f.addOutput(gelu(mul(softmax, broadcast(w, {true, false}))));
                   }),
                   {{4, 9}, {9}}});
  cases.push_back({"two_axes",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 2);
                     TensorView* t = tanh(x);
                     f.addOutput(sum(t, {0}));
                     f.addOutput(sum(t, {1}));
                   }),
                   {{5, 7}}});
  // sum over rows, broadcast back, scale, sum over columns.
  cases.push_back({"reduce_broadcast_reduce",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 2);
                     TensorView* rows = sum(x, {1});
                     TensorView* scaled = mul(x, broadcast(rows, {false, true}));
                     f.addOutput(sum(scaled, {0}));
                   }),
                   {{6, 4}}});
  // A slice's extent (s1 - 2) and a reshape's (s0 * (s1 - 2)) computed by scalar Exprs.
  cases.push_back({"slice_reshape",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 2);
                     TensorView* inner = slice(x, 1, 1, -1);
                     TensorView* flat = reshape(exp(inner), {-1});
                     f.addOutput(mul(flat, 2.0));
                     f.addOutput(sum(inner, {0}));
                   }),
                   {{3, 8}}});
  // exp(x) expanded to the columns of y: a segment of the expand alone reads only x.
  cases.push_back({"expand",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 1);
                     TensorView* y = makeSymbolicTensor(f, 2);
                     TensorView* e = expand(broadcast(exp(x), {false, true}),
                                            {int64_t{-1}, y->axis(1)->extent()});
                     f.addOutput(mul(e, 2.0));
                     f.addOutput(sum(add(e, y), {0}));
                   }),
                   {{4}, {4, 6}}});
  // A float and an int scalar input, and scalar Exprs over them.
  cases.push_back({"scalar_inputs",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 2);
                     Scalar* alpha = makeInputScalar(f, DataType::Float64);
                     Scalar* shift = makeInputScalar(f, DataType::Int64);
                     TensorView* scaled = mul(x, mul(alpha, 2.0));
                     f.addOutput(sum(scaled, {1}));
                     f.addOutput(sum(add(scaled, shift), {0}));
                   }),
                   {{3, 5}},
                   {ScalarValue(0.5), ScalarValue(int64_t{3})}});
  // An iota along the columns, used by reductions over both axes.
  cases.push_back({"iota",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 2);
                     TensorView* ramp = broadcast(
                         cast(iota(f, x->axis(1)->extent()), DataType::Float32), {true, false});
                     f.addOutput(sum(add(x, ramp), {1}));
                     f.addOutput(sum(mul(x, ramp), {0}));
                   }),
                   {{4, 6}}});
  // cast(x) is an output and read by reductions over two axes.
  cases.push_back({"forwarded_output",
                   fusionOf([](Fusion& f) {
                     TensorView* x = makeSymbolicTensor(f, 2, DataType::BFloat16);
                     TensorView* xf = cast(x, DataType::Float32);
                     f.addOutput(xf);
                     f.addOutput(sum(xf, {0}));
                     f.addOutput(sum(xf, {1}));
                   }),
                   {{3, 4}}});
  return cases;
}

}  // namespace

const std::vector<SegmentCase>& segmentCases() {
  static const std::vector<SegmentCase> cases = makeCases();
  return cases;
}

const SegmentCase& segmentCase(const std::string& name) {
  for (const SegmentCase& c : segmentCases()) {
    if (c.name == name) return c;
  }
  throw Error("no segment case " + name);
}

}  // namespace braze::test
