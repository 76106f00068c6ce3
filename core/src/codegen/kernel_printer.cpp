#include "codegen/kernel_printer.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <sstream>

#include "codegen/op_printer.h"

namespace braze::codegen {

namespace {

constexpr const char* kIndexNames[] = {"bidx", "bidy", "bidz", "tidx", "tidy", "tidz"};
constexpr const char* kBuiltins[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                     "threadIdx.x", "threadIdx.y", "threadIdx.z"};

const char* boolText(bool b) {
  return b ? "true" : "false";
}

class KernelPrinter {
 public:
  // The C++ type of a block or grid reduction's value, its identity and its contribution.
  struct ReductionText {
    bool welford = false;
    std::string type;
    std::string identity;
    std::string contribution;
  };
  KernelPrinter(const kir::Kernel& kernel, std::ostream& os) : kernel_(kernel), os_(os) {
    for (const kir::Parameter& p : kernel.parameters) {
      if (const auto* tv = p.val != nullptr ? p.val->dynCast<TensorView>() : nullptr)
        global_.insert(tv);
    }
    // Register arrays of an even number of 2-byte elements, read out of their 32-bit words.
    if (kernel.fusion != nullptr && kernel.fusion->packedHalfRegisters()) {
      kir::forEachStmt(kernel.body, [&](const kir::Stmt& stmt) {
        const auto* alloc = stmt.dynCast<kir::Allocate>();
        if (alloc == nullptr || alloc->memory != MemoryType::Local ||
            alloc->dynamic_offset.defined() || sizeInBytes(alloc->dtype) != 2)
          return;
        const std::optional<int64_t> size = alloc->size.constantValue();
        if (size && *size % 2 == 0) packed_.insert(alloc->tv);
      });
    }
  }

  void print(const std::string& name) {
    printSignature(name);
    os_ << " {\n";
    printPrologue();
    printScope(kernel_.body, 1);
    os_ << "}\n";
  }

 private:
  // ---- signature and prologue ----

  int64_t constantThreads() const { return kir::constantBlockThreads(kernel_).value_or(-1); }

  // "braze::BlockScratch<x, y, z>" where a thread dim's size is fixed in the kernel (1 for a dim
  // no loop uses, 0 for one known only at launch), so the block reductions compile for it; empty
  // where none is.
  std::string blockScratchType() const {
    std::array<int64_t, 3> dims{};
    for (size_t i = 0; i < 3; ++i) {
      const kir::LaunchDim& dim = kernel_.launch[3 + i];
      dims[i] = dim.used ? dim.size_in_kernel.constantValue().value_or(0) : 1;
    }
    if (std::none_of(dims.begin(), dims.end(), [](int64_t d) { return d > 0; })) return "";
    return "braze::BlockScratch<" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) +
           ", " + std::to_string(dims[2]) + ">";
  }

  // The scratch argument of a grid reduction without block-reduced dims: none, but typed with
  // the block's dims where they are known, for its thread counts.
  std::string noScratch() const {
    const std::string type = blockScratchType();
    return type.empty() ? "nullptr" : type + "{nullptr}";
  }

  void printSignature(const std::string& name) {
    os_ << "extern \"C\" __global__ void ";
    // Constant block sizes are exact bounds; stated bounds (lowering checked that a constant
    // block fits them) add the blocks per SM that ptxas budgets registers for.
    const int64_t threads = constantThreads();
    const std::optional<LaunchBounds>& bounds = kernel_.launch_bounds;
    const int64_t max_threads = threads > 0 && threads <= 1024 ? threads
                                : bounds                       ? bounds->max_threads_per_block
                                                               : 0;
    if (max_threads > 0) {
      os_ << "__launch_bounds__(" << max_threads;
      if (bounds && bounds->min_blocks_per_sm > 0) os_ << ", " << bounds->min_blocks_per_sm;
      os_ << ") ";
    }
    os_ << name << "(";
    for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
      const kir::Parameter& p = kernel_.parameters[i];
      if (i > 0) os_ << ", ";
      switch (p.kind) {
        case kir::Parameter::Kind::InputScalar:
          os_ << scalarParameterType(p.val->dtype()) << " " << p.name;
          break;
        case kir::Parameter::Kind::Workspace:
          os_ << "char* " << p.name;
          break;
        default: {
          const auto* tv = p.val->as<TensorView>();
          os_ << "braze::Tensor<" << storageType(tv->dtype()) << ", " << tv->rank() << ", IndexT> "
              << p.name;
        }
      }
    }
    os_ << ")";
  }

  void printPrologue() {
    for (size_t slot = 0; slot < 6; ++slot) {
      if (!kernel_.launch[slot].used) continue;
      os_ << "  const IndexT " << kIndexNames[slot] << " = " << kBuiltins[slot] << ";\n";
    }
    // The block reductions' scratch is `braze_smem`; where a thread dim's size is known here, a
    // braze::BlockScratch carrying the dims wraps the bytes, so the reductions compile for them.
    const std::string scratch_type = blockScratchType();
    const char* scratch = scratch_type.empty() ? "braze_smem" : "braze_smem_bytes";
    if (kernel_.dynamic_shared_tensor_bytes != nullptr) {
      // Shared tensors in dynamic shared memory (the allocate pass placed them); the block
      // reductions' scratch follows them.
      os_ << "  extern __shared__ __align__(16) char braze_dynamic_smem[];\n";
      if (kernel_.reduction_smem_bytes_per_thread > 0)
        os_ << "  char* " << scratch << " = braze_dynamic_smem + "
            << kernel_.dynamic_shared_tensor_bytes_in_kernel.toString() << ";\n";
    } else if (kernel_.reduction_smem_bytes_per_thread > 0) {
      const int64_t threads = constantThreads();
      if (threads > 0) {
        os_ << "  __shared__ __align__(16) char " << scratch << "["
            << threads * kernel_.reduction_smem_bytes_per_thread << "];\n";
      } else {
        os_ << "  extern __shared__ __align__(16) char " << scratch << "[];\n";
      }
    }
    if (!scratch_type.empty() && kernel_.reduction_smem_bytes_per_thread > 0)
      os_ << "  const " << scratch_type << " braze_smem{" << scratch << "};\n";
    kir::forEachStmt(kernel_.body, [&](const kir::Stmt& stmt) {
      if (const auto* op = stmt.dynCast<kir::ReductionOp>()) {
        if (!op->grid_flag.empty()) os_ << "  bool " << op->grid_flag << " = false;\n";
      }
    });
  }

  // ---- operands ----

  std::string accessText(const kir::TensorAccess& a) const {
    BRAZE_INTERNAL_CHECK(a.offset.defined()) << "codegen: " << a.tv->name() << " was not indexed";
    const std::string base = global_.count(a.tv) ? a.tv->name() + ".data" : a.tv->name();
    return base + "[" + a.offset.toString() + "]";
  }

  Rendered renderScalar(const Val* val) const {
    const auto* s = val->as<Scalar>();
    Rendered r;
    r.dtype = s->dtype();
    if (s->isConstant()) {
      r.constant = *s->value();
      r.text = literal(*s->value(), s->dtype());
      return r;
    }
    auto named = kernel_.scalar_names.find(s);
    if (named != kernel_.scalar_names.end()) {
      r.text = named->second;
      r.index_typed = s->dtype() == DataType::Index;
      return r;
    }
    const Expr* def = s->definition();
    BRAZE_INTERNAL_CHECK(def != nullptr && isElementwise(def->op()))
        << "codegen: the scalar " << s->name() << " has no value in the kernel";
    std::vector<std::string> inputs;
    for (size_t i = 0; i < def->inputs().size(); ++i) {
      inputs.push_back(convert(renderScalar(def->input(i)), inputComputeDtype(*def, i)));
    }
    r.text = elementwiseValue(*def, inputs);
    r.dtype = computeDtype(s->dtype());
    return r;
  }

  Rendered render(const kir::Operand& operand) const {
    Rendered r;
    switch (operand.kind) {
      case kir::Operand::Kind::Tensor:
        r.text = packed_.count(operand.access.tv)
                     ? "braze::packedElement(" + operand.access.tv->name() + ", " +
                           operand.access.offset.toString() + ")"
                     : accessText(operand.access);
        r.dtype = operand.access.tv->dtype();
        return r;
      case kir::Operand::Kind::Scalar:
        return renderScalar(operand.scalar);
      case kir::Operand::Kind::Index:
        r.text = operand.index.toString();
        r.dtype = DataType::Index;
        r.index_typed = true;
        r.atomic = operand.index.kind() == kir::ValueKind::Symbol ||
                   operand.index.kind() == kir::ValueKind::Constant;
        return r;
    }
    return r;
  }

  // ---- statements ----

  void indent(int depth) {
    for (int i = 0; i < depth; ++i) os_ << "  ";
  }

  void printScope(const kir::Scope& scope, int depth) {
    for (size_t i = 0; i < scope.size(); ++i) {
      const size_t run = groupedRun(scope, i);
      if (run > 1) {
        printBlockReductionGroup(scope, i, run, depth);
        i += run - 1;
      } else {
        printStmt(*scope[i], depth);
      }
    }
  }

  // The block reductions group-block-reductions joined, starting at scope[i]: how many (0 when
  // scope[i] starts no run).
  static size_t groupedRun(const kir::Scope& scope, size_t i) {
    size_t n = 0;
    while (i + n < scope.size()) {
      const auto* op = scope[i + n]->dynCast<kir::ReductionOp>();
      if (op == nullptr) return 0;
      ++n;
      if (!op->grouped_with_next) break;
    }
    return n > 1 ? n : 0;
  }

  // Block reductions that run together: each thread's contributions, one blockReduceGroup, then
  // each result stored as printReduction stores it.
  void printBlockReductionGroup(const kir::Scope& scope, size_t first, size_t n, int depth) {
    const auto& lead = *scope[first]->as<kir::ReductionOp>();
    const ReductionText text = reductionText(lead);
    indent(depth);
    os_ << "{\n";
    indent(depth + 1);
    os_ << text.type << " braze_group[" << n << "];\n";
    for (size_t k = 0; k < n; ++k) {
      const auto& op = *scope[first + k]->as<kir::ReductionOp>();
      indent(depth + 1);
      os_ << "{\n";
      printReductionValue(op, reductionText(op), depth + 2, /*reduce_block=*/false);
      indent(depth + 2);
      os_ << "braze_group[" << k << "] = braze_value;\n";
      indent(depth + 1);
      os_ << "}\n";
    }
    indent(depth + 1);
    os_ << "braze::blockReduceGroup<" << maskArgs(lead.block) << ", " << n << ">(braze_group, "
        << reductionFunctor(*lead.expr) << ", " << text.identity << ", braze_smem);\n";
    for (size_t k = 0; k < n; ++k) {
      const auto& op = *scope[first + k]->as<kir::ReductionOp>();
      indent(depth + 1);
      os_ << "{\n";
      indent(depth + 2);
      os_ << text.type << " braze_value = braze_group[" << k << "];\n";
      printReductionStore(op, depth + 2);
      indent(depth + 1);
      os_ << "}\n";
    }
    indent(depth);
    os_ << "}\n";
  }

  void printStmt(const kir::Stmt& stmt, int depth) {
    switch (stmt.kind()) {
      case kir::StmtKind::ForLoop:
        printLoop(*stmt.as<kir::ForLoop>(), depth);
        return;
      case kir::StmtKind::IfThenElse: {
        const auto& branch = *stmt.as<kir::IfThenElse>();
        indent(depth);
        os_ << "if (" << branch.predicate.toString() << ") {\n";
        printScope(branch.then_body, depth + 1);
        indent(depth);
        if (!branch.else_body.empty()) {
          os_ << "} else {\n";
          printScope(branch.else_body, depth + 1);
          indent(depth);
        }
        os_ << "}\n";
        return;
      }
      case kir::StmtKind::Allocate: {
        const auto& alloc = *stmt.as<kir::Allocate>();
        indent(depth);
        if (alloc.dynamic_offset.defined()) {
          const std::string type = storageType(alloc.dtype);
          os_ << type << "* " << alloc.tv->name() << " = reinterpret_cast<" << type
              << "*>(braze_dynamic_smem + " << alloc.dynamic_offset.toString() << ");\n";
          return;
        }
        if (alloc.memory == MemoryType::Shared) os_ << "__shared__ ";
        os_ << "__align__(16) " << storageType(alloc.dtype) << " " << alloc.tv->name() << "["
            << alloc.size.toString() << "];\n";
        return;
      }
      case kir::StmtKind::TensorOp:
        printTensorOp(*stmt.as<kir::TensorOp>(), depth);
        return;
      case kir::StmtKind::InitOp: {
        const auto& init = *stmt.as<kir::InitOp>();
        indent(depth);
        os_ << accessText(init.output) << " = "
            << identityText(*init.expr, static_cast<size_t>(init.output_index)) << ";\n";
        return;
      }
      case kir::StmtKind::ReductionOp:
        printReduction(*stmt.as<kir::ReductionOp>(), depth);
        return;
      case kir::StmtKind::VectorCopy: {
        const auto& copy = *stmt.as<kir::VectorCopy>();
        indent(depth);
        os_ << (copy.read_only ? "braze::vectorLoadReadOnly<" : "braze::vectorCopy<")
            << storageType(copy.dst.tv->dtype()) << ", " << copy.width << ">(&"
            << accessText(copy.dst) << ", &" << accessText(copy.src) << ");\n";
        return;
      }
      case kir::StmtKind::Sync:
        indent(depth);
        os_ << "__syncthreads();\n";
        return;
      case kir::StmtKind::Comment:
        indent(depth);
        os_ << "// " << stmt.as<kir::Comment>()->text << "\n";
        return;
    }
  }

  void printLoop(const kir::ForLoop& loop, int depth) {
    if (grouped_ == nullptr && serial_loops_ == 0) {
      int64_t elements = 0;
      if (const kir::ReductionOp* op = groupableGridReduction(loop, elements)) {
        printGroupedGridReduction(loop, *op, elements, depth);
        return;
      }
    }
    if (loop.index.isConstant()) {
      // A marker loop of extent 1 (an unswitched axis): just its body, in its own scope.
      indent(depth);
      os_ << "{\n";
      printScope(loop.body, depth + 1);
      indent(depth);
      os_ << "}\n";
      return;
    }
    for (const kir::CarriedValue& value : loop.carried) {
      indent(depth);
      os_ << computeType(computeDtype(value.scan->output(0)->dtype())) << " " << value.name << " = "
          << identityText(*value.scan, 0) << ";\n";
    }
    printLoopHeader(loop, depth);
    ++serial_loops_;
    printScope(loop.body, depth + 1);
    --serial_loops_;
    indent(depth);
    os_ << "}\n";
  }

  // ---- grouped grid reductions ----
  //
  // A grid reduction inside unrolled loops of constant extents (one per register element of a
  // column partial, each through its own workspace region: hoist-parallel-reductions) would make
  // the blocks meet once per element, each time a fence, a semaphore round trip and the
  // finishing block's dependent loads. The elements are independent, so such loops are printed
  // twice around one braze::gridReduceGroup: the first copy computes each element's value (and
  // its block reduction) into an array, the second runs the loops' statements as before with
  // the element's result in place of the grid reduction.
  //
  //   for i in 0..8 (unrolled):                  float g[8];
  //     T3[0] = 0                                for i: g[i] = blockReduce(T2[i])
  //     T3[0] += gridReduce(T2[i], ws + i * R) -> f = gridReduceGroup(g, ws, R)
  //     if (f) T4[i] = T3[0]                     for i: T3[0] = 0; T3[0] += g[i]; if (f) T4[i] =
  //     T3[0]
  //
  // Only where the loops are the outermost ones the grid reduction's region counts (no serial
  // loop around them), the reduction is not under a branch, and its input is not written inside
  // the loops (the first copy computes nothing else).

  static bool isUnrolledConstant(const kir::ForLoop& loop) {
    return loop.index.isConstant() || (loop.unroll && loop.extent.constantValue().has_value());
  }

  struct GridReductionSite {
    const kir::ReductionOp* op = nullptr;
    bool direct = false;   // reached through unrolled constant loops only
    int64_t elements = 1;  // iterations of those loops
  };

  static void findGridReductions(const kir::Scope& scope, bool direct, int64_t elements,
                                 std::vector<GridReductionSite>& sites,
                                 std::set<const TensorView*>& written) {
    for (const kir::StmtPtr& stmt : scope) {
      if (const auto* loop = stmt->dynCast<kir::ForLoop>()) {
        const bool unrolled = isUnrolledConstant(*loop);
        const int64_t extent =
            loop->index.isConstant() ? 1 : loop->extent.constantValue().value_or(1);
        findGridReductions(loop->body, direct && unrolled, elements * extent, sites, written);
      } else if (const auto* branch = stmt->dynCast<kir::IfThenElse>()) {
        findGridReductions(branch->then_body, false, elements, sites, written);
        findGridReductions(branch->else_body, false, elements, sites, written);
      } else if (const auto* op = stmt->dynCast<kir::ReductionOp>()) {
        for (const kir::TensorAccess& a : op->outputs) written.insert(a.tv);
        if (op->grid.any()) sites.push_back({op, direct, elements});
      } else if (const auto* tensor_op = stmt->dynCast<kir::TensorOp>()) {
        written.insert(tensor_op->output.tv);
      } else if (const auto* init = stmt->dynCast<kir::InitOp>()) {
        written.insert(init->output.tv);
      } else if (const auto* copy = stmt->dynCast<kir::VectorCopy>()) {
        written.insert(copy->dst.tv);
      }
    }
  }

  static const kir::ReductionOp* groupableGridReduction(const kir::ForLoop& loop,
                                                        int64_t& elements) {
    if (loop.index.isConstant() || !isUnrolledConstant(loop)) return nullptr;
    std::vector<GridReductionSite> sites;
    std::set<const TensorView*> written;
    findGridReductions(loop.body, true, *loop.extent.constantValue(), sites, written);
    if (sites.size() != 1 || !sites[0].direct || sites[0].elements < 2) return nullptr;
    const kir::ReductionOp& op = *sites[0].op;
    if (!op.workspace_region.defined() || op.finish) return nullptr;
    if (op.input.kind == kir::Operand::Kind::Tensor && written.count(op.input.access.tv))
      return nullptr;
    elements = sites[0].elements;
    return &op;
  }

  std::string groupName(const kir::ReductionOp& op) const { return op.grid_flag + "_group"; }

  void printGroupedGridReduction(const kir::ForLoop& loop, const kir::ReductionOp& op,
                                 int64_t elements, int depth) {
    const Expr& expr = *op.expr;
    const ReductionText text = reductionText(op);
    indent(depth);
    os_ << "{\n";
    indent(depth + 1);
    os_ << text.type << " " << groupName(op) << "[" << elements << "];\n";
    // The block reductions of the elements together too, where blockReduceGroup takes them
    // (at most 32): fewer barriers, and a sixth of a norm backward's code.
    const bool block_group = op.block.any() && elements <= 32;
    printGroupValues(loop, op, text, depth + 1, !block_group);
    if (block_group) {
      indent(depth + 1);
      os_ << "braze::blockReduceGroup<" << maskArgs(op.block) << ", " << elements << ">("
          << groupName(op) << ", " << reductionFunctor(expr) << ", " << text.identity
          << ", braze_smem);\n";
    }
    indent(depth + 1);
    // Blocks all resident at once (a cooperative launch) finish the sums together after a grid
    // barrier; otherwise the last block to arrive finishes them. Welford triplets take the
    // last-block path (three values per slot).
    const bool resident = kernel_.cooperative && !text.welford;
    os_ << op.grid_flag << " = braze::gridReduceGroup" << (resident ? "Resident" : "") << "<"
        << maskArgs(op.grid) << ", " << maskArgs(op.block) << ", " << elements << ">("
        << groupName(op) << ", " << reductionFunctor(expr) << ", " << text.identity << ", "
        << kernel_.parameters[static_cast<size_t>(op.workspace)].name
        << ", braze::gridReduceRegionBytes(" << (text.welford ? "24" : "8") << "), "
        << (op.block.any() ? std::string("braze_smem") : noScratch()) << ");\n";
    grouped_ = &op;
    printLoop(loop, depth + 1);
    grouped_ = nullptr;
    indent(depth);
    os_ << "}\n";
  }

  // "#pragma unroll" where asked, then "for (IndexT i = 0; i < extent; ++i) {".
  void printLoopHeader(const kir::ForLoop& loop, int depth) {
    if (loop.unroll) {
      indent(depth);
      os_ << "#pragma unroll\n";
    }
    indent(depth);
    const std::string i = loop.index.toString();
    if (loop.reversed) {
      os_ << "for (IndexT " << i << " = (" << loop.extent.toString() << ") - 1; " << i
          << " >= 0; --" << i << ") {\n";
      return;
    }
    os_ << "for (IndexT " << i << " = 0; " << i << " < " << loop.extent.toString() << "; ++" << i
        << ") {\n";
  }

  // The first copy of the loops: only the loops leading to `op`, and its value.
  // `reduce_block`: each element through its own block reduction (else the caller reduces the
  // array at once).
  void printGroupValues(const kir::ForLoop& loop, const kir::ReductionOp& op,
                        const ReductionText& text, int depth, bool reduce_block) {
    printLoopHeader(loop, depth);
    for (const kir::StmtPtr& stmt : loop.body) {
      if (const auto* inner = stmt->dynCast<kir::ForLoop>()) {
        if (contains(inner->body, op)) {
          if (inner->index.isConstant()) {
            for (const kir::StmtPtr& s : inner->body) {
              if (const auto* l = s->dynCast<kir::ForLoop>(); l && contains(l->body, op))
                printGroupValues(*l, op, text, depth + 1, reduce_block);
              if (s.get() == &op) printGroupValue(op, text, depth + 1, reduce_block);
            }
          } else {
            printGroupValues(*inner, op, text, depth + 1, reduce_block);
          }
        }
      } else if (stmt.get() == &op) {
        printGroupValue(op, text, depth + 1, reduce_block);
      }
    }
    indent(depth);
    os_ << "}\n";
  }

  void printGroupValue(const kir::ReductionOp& op, const ReductionText& text, int depth,
                       bool reduce_block) {
    indent(depth);
    os_ << "{\n";
    printReductionValue(op, text, depth + 1, reduce_block);
    indent(depth + 1);
    os_ << groupName(op) << "[" << op.workspace_region.toString() << "] = braze_value;\n";
    indent(depth);
    os_ << "}\n";
  }

  static bool contains(const kir::Scope& scope, const kir::ReductionOp& op) {
    for (const kir::StmtPtr& stmt : scope) {
      if (stmt.get() == &op) return true;
      if (const auto* loop = stmt->dynCast<kir::ForLoop>(); loop && contains(loop->body, op))
        return true;
    }
    return false;
  }

  std::string valueOf(const kir::TensorOp& op) const {
    const Expr& expr = *op.expr;
    const DataType out = computeDtype(op.output.tv->dtype());
    auto input = [&](size_t i) { return convert(render(op.inputs[i]), out); };
    if (expr.op() == OpKind::Cast) return input(0);
    if (isElementwise(expr.op())) {
      std::vector<std::string> inputs;
      for (size_t i = 0; i < expr.inputs().size(); ++i) {
        inputs.push_back(convert(render(op.inputs[i]), inputComputeDtype(expr, i)));
      }
      return elementwiseValue(expr, inputs);
    }
    switch (expr.op()) {
      case OpKind::Pad:
        return "(" + op.inputs[0].guard.toString() + " ? " + input(0) + " : " + input(1) + ")";
      case OpKind::Cat: {
        std::string text = input(op.inputs.size() - 1);
        for (size_t k = op.inputs.size() - 1; k-- > 0;) {
          text = "(" + op.inputs[k].guard.toString() + " ? " + input(k) + " : " + text + ")";
        }
        return text;
      }
      case OpKind::Full:
        return input(0);
      case OpKind::Iota: {
        // inputs: start, step, then the element's position.
        return "(" + input(0) + " + " + input(2) + " * " + input(1) + ")";
      }
      case OpKind::Uniform:
      case OpKind::Normal:
        return randomValue(op);
      default:
        // Data movement: set, broadcast, expand, permute, squeeze, reshape, slice, select,
        // index_select, gather.
        return render(op.inputs[0]).text;
    }
  }

  // inputs: the two distribution parameters (in the compute dtype), seed, offset, then the
  // element's position: braze::uniformFloat(seed, offset, position, minval, maxval).
  std::string randomValue(const kir::TensorOp& op) const {
    const bool wide = op.output.tv->dtype() == DataType::Float64;
    const DataType parameter = wide ? DataType::Float64 : DataType::Float32;
    const std::string function =
        std::string(op.expr->op() == OpKind::Uniform ? "uniform" : "normal") +
        (wide ? "Double" : "Float");
    const auto as = [&](size_t i, DataType dtype) { return convert(render(op.inputs[i]), dtype); };
    return "braze::" + function + "(" + as(2, DataType::Int64) + ", " + as(3, DataType::Int64) +
           ", " + as(4, DataType::Int64) + ", " + as(0, parameter) + ", " + as(1, parameter) + ")";
  }

  void printTensorOp(const kir::TensorOp& op, int depth) {
    if (familyOf(op.expr->op()) == OpFamily::Scan) {
      printScanStep(op, depth);
      return;
    }
    indent(depth);
    const bool opaque = kernel_.fusion != nullptr && kernel_.fusion->opaqueToCompiler(op.output.tv);
    os_ << accessText(op.output) << " = " << (opaque ? "braze::opaque(" : "") << valueOf(op)
        << (opaque ? ")" : "") << ";\n";
  }

  // The running value combined with this element and stored; without a carried value (the
  // scan axis has extent 1) the element is its own prefix.
  void printScanStep(const kir::TensorOp& op, int depth) {
    const std::string x = convert(render(op.inputs[0]), computeDtype(op.output.tv->dtype()));
    indent(depth);
    if (op.accumulator.empty()) {
      os_ << accessText(op.output) << " = " << x << ";\n";
      return;
    }
    os_ << op.accumulator << " = " << combine(*scanCombiner(op.expr->op()), op.accumulator, x)
        << ";\n";
    indent(depth);
    os_ << accessText(op.output) << " = " << op.accumulator << ";\n";
  }

  std::string maskArgs(const kir::ParallelMask& m) const {
    return std::string(boolText(m.x)) + ", " + boolText(m.y) + ", " + boolText(m.z);
  }

  ReductionText reductionText(const kir::ReductionOp& op) const {
    const Expr& expr = *op.expr;
    ReductionText text;
    text.welford = expr.op() == OpKind::Welford;
    const DataType acc = computeDtype(op.outputs[0].tv->dtype());
    text.type = text.welford ? "braze::WelfordTriplet<" + computeType(acc) + ">" : computeType(acc);
    const std::string zero = literal(int64_t{0}, acc);
    text.identity =
        text.welford ? text.type + "{" + zero + ", " + zero + ", 0}" : identityText(expr, 0);
    if (op.finish) {
      text.contribution = text.welford ? text.type + "{" + accessText(op.outputs[0]) + ", " +
                                             accessText(op.outputs[1]) + ", " +
                                             accessText(op.outputs[2]) + "}"
                                       : accumulator(op);
    } else {
      const std::string x = convert(render(op.input), acc);
      text.contribution = text.welford ? text.type + "{" + x + ", " + zero + ", 1}" : x;
    }
    return text;
  }

  // `braze_value` declared with this thread's contribution (the identity where out of
  // bounds), reduced across the block's reduced thread dims.
  void printReductionValue(const kir::ReductionOp& op, const ReductionText& text, int depth,
                           bool reduce_block = true) {
    indent(depth);
    os_ << text.type << " braze_value = ";
    if (op.input_predicate.defined() && !op.input_predicate.isTrue()) {
      os_ << "(" << op.input_predicate.toString() << ") ? " << text.contribution << " : "
          << text.identity;
    } else {
      os_ << text.contribution;
    }
    os_ << ";\n";
    if (op.block.any() && reduce_block) {
      indent(depth);
      os_ << "braze_value = braze::blockReduce<" << maskArgs(op.block) << ">(braze_value, "
          << reductionFunctor(*op.expr) << ", " << text.identity << ", braze_smem);\n";
    }
  }

  void printReduction(const kir::ReductionOp& op, int depth) {
    const Expr& expr = *op.expr;
    const bool welford = expr.op() == OpKind::Welford;
    const DataType acc = computeDtype(op.outputs[0].tv->dtype());
    if (!op.block.any() && !op.grid.any()) {
      const std::string x = convert(render(op.input), acc);
      indent(depth);
      if (welford) {
        os_ << "braze::welfordUpdate(" << accessText(op.outputs[0]) << ", "
            << accessText(op.outputs[1]) << ", " << accessText(op.outputs[2]) << ", " << x
            << ");\n";
        return;
      }
      const std::string out = accessText(op.outputs[0]);
      os_ << out << " = " << combine(expr.op(), accumulator(op), x) << ";\n";
      return;
    }
    // Block and grid reductions: every thread takes part; out-of-bounds threads bring the
    // identity, and only the owners of the result store it.
    const ReductionText text = reductionText(op);
    indent(depth);
    os_ << "{\n";
    if (&op == grouped_) {
      // The second copy of grouped loops: gridReduceGroup left the result in the array.
      indent(depth + 1);
      os_ << text.type << " braze_value = " << groupName(op) << "["
          << op.workspace_region.toString() << "];\n";
    } else {
      printReductionValue(op, text, depth + 1);
    }
    if (op.grid.any() && &op != grouped_) {
      indent(depth + 1);
      std::string workspace = kernel_.parameters[static_cast<size_t>(op.workspace)].name;
      if (op.workspace_region.defined()) {
        // Same entry size as the executor's allocation (build-loop-nests' addWorkspace).
        workspace += " + (" + op.workspace_region.toString() + ") * braze::gridReduceRegionBytes(" +
                     (welford ? "24" : "8") + ")";
      }
      // After a block reduction every thread of its dims holds the block's value: the grid
      // reduction stores one copy and shares the finishing loads among the copies.
      os_ << op.grid_flag << " = braze::gridReduce<" << maskArgs(op.grid);
      if (op.block.any()) os_ << ", " << maskArgs(op.block);
      os_ << ">(braze_value, " << reductionFunctor(expr) << ", " << text.identity << ", "
          << workspace << (op.block.any() ? ", braze_smem" : "") << ");\n";
    }
    printReductionStore(op, depth + 1);
    indent(depth);
    os_ << "}\n";
  }

  // Stores `braze_value`, the reduced value, into the reduction's outputs (only their owners
  // where a write predicate says so).
  void printReductionStore(const kir::ReductionOp& op, int depth) {
    const bool welford = op.expr->op() == OpKind::Welford;
    indent(depth);
    const bool guarded = op.write_predicate.defined() && !op.write_predicate.isTrue();
    if (guarded) os_ << "if (" << op.write_predicate.toString() << ") ";
    if (welford && op.finish) {
      os_ << "{\n";
      const char* fields[] = {"avg", "m2", "n"};
      for (size_t k = 0; k < 3; ++k) {
        indent(depth + 1);
        os_ << accessText(op.outputs[k]) << " = braze_value." << fields[k] << ";\n";
      }
      indent(depth);
      os_ << "}\n";
    } else if (welford) {
      os_ << "braze::welfordMerge(" << accessText(op.outputs[0]) << ", "
          << accessText(op.outputs[1]) << ", " << accessText(op.outputs[2]) << ", braze_value);\n";
    } else {
      const std::string out = accessText(op.outputs[0]);
      os_ << out << " = "
          << (op.finish ? std::string("braze_value")
                        : combine(op.expr->op(), accumulator(op), "braze_value"))
          << ";\n";
    }
  }

  // The accumulator read in its compute type.
  std::string accumulator(const kir::ReductionOp& op) const {
    Rendered r;
    r.text = accessText(op.outputs[0]);
    r.dtype = op.outputs[0].tv->dtype();
    return convert(r, computeDtype(r.dtype));
  }

  static std::string combine(OpKind op, const std::string& acc, const std::string& x) {
    switch (op) {
      case OpKind::Sum:
        return acc + " + " + x;
      case OpKind::Prod:
        return acc + " * " + x;
      case OpKind::Max:
        return "braze::maximum(" + acc + ", " + x + ")";
      case OpKind::Min:
        return "braze::minimum(" + acc + ", " + x + ")";
      default:
        BRAZE_INTERNAL_CHECK(false) << "codegen: " << op << " is not a reduction";
    }
    return "";
  }

  const kir::Kernel& kernel_;
  std::ostream& os_;
  std::set<const TensorView*> global_;
  std::set<const TensorView*> packed_;  // Fusion::packedHalfRegisters
  // Serial (not unrolled-constant) loops open around the statement being printed.
  int serial_loops_ = 0;
  // The grid reduction whose grouped loops are being printed a second time.
  const kir::ReductionOp* grouped_ = nullptr;
};

}  // namespace

std::string printKernel(const kir::Kernel& kernel, const std::string& name) {
  std::ostringstream os;
  KernelPrinter(kernel, os).print(name);
  return os.str();
}

}  // namespace braze::codegen
