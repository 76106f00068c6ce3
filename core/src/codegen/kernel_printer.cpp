#include "codegen/kernel_printer.h"

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
  KernelPrinter(const kir::Kernel& kernel, std::ostream& os) : kernel_(kernel), os_(os) {
    for (const kir::Parameter& p : kernel.parameters) {
      if (const auto* tv = p.val != nullptr ? p.val->dynCast<TensorView>() : nullptr)
        global_.insert(tv);
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

  int64_t constantThreads() const {
    int64_t threads = 1;
    for (int slot = 3; slot < 6; ++slot) {
      const kir::LaunchDim& dim = kernel_.launch[static_cast<size_t>(slot)];
      if (!dim.used) continue;
      auto c = dim.size_in_kernel.constantValue();
      if (!c) return -1;
      threads *= *c;
    }
    return threads;
  }

  void printSignature(const std::string& name) {
    os_ << "extern \"C\" __global__ void ";
    const int64_t threads = constantThreads();
    if (threads > 0 && threads <= 1024) os_ << "__launch_bounds__(" << threads << ") ";
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
    if (kernel_.reduction_smem_bytes_per_thread > 0) {
      const int64_t threads = constantThreads();
      if (threads > 0) {
        os_ << "  __shared__ __align__(16) char braze_smem["
            << threads * kernel_.reduction_smem_bytes_per_thread << "];\n";
      } else {
        os_ << "  extern __shared__ __align__(16) char braze_smem[];\n";
      }
    }
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
        r.text = accessText(operand.access);
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
    for (const kir::StmtPtr& stmt : scope) printStmt(*stmt, depth);
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
        os_ << "braze::vectorCopy<" << storageType(copy.dst.tv->dtype()) << ", " << copy.width
            << ">(&" << accessText(copy.dst) << ", &" << accessText(copy.src) << ");\n";
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
    if (loop.index.isConstant()) {
      // A marker loop of extent 1 (an unswitched axis): just its body, in its own scope.
      indent(depth);
      os_ << "{\n";
      printScope(loop.body, depth + 1);
      indent(depth);
      os_ << "}\n";
      return;
    }
    if (loop.unroll) {
      indent(depth);
      os_ << "#pragma unroll\n";
    }
    indent(depth);
    const std::string i = loop.index.toString();
    os_ << "for (IndexT " << i << " = 0; " << i << " < " << loop.extent.toString() << "; ++" << i
        << ") {\n";
    printScope(loop.body, depth + 1);
    indent(depth);
    os_ << "}\n";
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
      default:
        // Data movement: set, broadcast, expand, permute, squeeze, reshape, slice, select,
        // index_select, gather.
        return render(op.inputs[0]).text;
    }
  }

  void printTensorOp(const kir::TensorOp& op, int depth) {
    indent(depth);
    os_ << accessText(op.output) << " = " << valueOf(op) << ";\n";
  }

  std::string maskArgs(const kir::ParallelMask& m) const {
    return std::string(boolText(m.x)) + ", " + boolText(m.y) + ", " + boolText(m.z);
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
      os_ << out << " = " << combine(expr, accumulator(op), x) << ";\n";
      return;
    }
    // Block and grid reductions: every thread takes part; out-of-bounds threads bring the
    // identity, and only the owners of the result store it.
    const std::string type =
        welford ? "braze::WelfordTriplet<" + computeType(acc) + ">" : computeType(acc);
    const std::string zero = literal(int64_t{0}, acc);
    const std::string identity =
        welford ? type + "{" + zero + ", " + zero + ", 0}" : identityText(expr, 0);
    std::string contribution;
    if (op.finish) {
      contribution = welford
                         ? type + "{" + accessText(op.outputs[0]) + ", " +
                               accessText(op.outputs[1]) + ", " + accessText(op.outputs[2]) + "}"
                         : accumulator(op);
    } else {
      const std::string x = convert(render(op.input), acc);
      contribution = welford ? type + "{" + x + ", " + zero + ", 1}" : x;
    }
    indent(depth);
    os_ << "{\n";
    indent(depth + 1);
    os_ << type << " braze_value = ";
    if (op.input_predicate.defined() && !op.input_predicate.isTrue()) {
      os_ << "(" << op.input_predicate.toString() << ") ? " << contribution << " : " << identity;
    } else {
      os_ << contribution;
    }
    os_ << ";\n";
    if (op.block.any()) {
      indent(depth + 1);
      os_ << "braze_value = braze::blockReduce<" << maskArgs(op.block) << ">(braze_value, "
          << reductionFunctor(expr) << ", " << identity << ", braze_smem);\n";
    }
    if (op.grid.any()) {
      indent(depth + 1);
      std::string workspace = kernel_.parameters[static_cast<size_t>(op.workspace)].name;
      if (op.workspace_region.defined()) {
        // Same entry size as the executor's allocation (build-loop-nests' addWorkspace).
        workspace += " + (" + op.workspace_region.toString() + ") * braze::gridReduceRegionBytes(" +
                     (welford ? "24" : "8") + ")";
      }
      os_ << op.grid_flag << " = braze::gridReduce<" << maskArgs(op.grid) << ">(braze_value, "
          << reductionFunctor(expr) << ", " << identity << ", " << workspace << ");\n";
    }
    indent(depth + 1);
    const bool guarded = op.write_predicate.defined() && !op.write_predicate.isTrue();
    if (guarded) os_ << "if (" << op.write_predicate.toString() << ") ";
    if (welford && op.finish) {
      os_ << "{\n";
      const char* fields[] = {"avg", "m2", "n"};
      for (size_t k = 0; k < 3; ++k) {
        indent(depth + 2);
        os_ << accessText(op.outputs[k]) << " = braze_value." << fields[k] << ";\n";
      }
      indent(depth + 1);
      os_ << "}\n";
    } else if (welford) {
      os_ << "braze::welfordMerge(" << accessText(op.outputs[0]) << ", "
          << accessText(op.outputs[1]) << ", " << accessText(op.outputs[2]) << ", braze_value);\n";
    } else {
      const std::string out = accessText(op.outputs[0]);
      os_ << out << " = "
          << (op.finish ? std::string("braze_value")
                        : combine(expr, accumulator(op), "braze_value"))
          << ";\n";
    }
    indent(depth);
    os_ << "}\n";
  }

  // The accumulator read in its compute type.
  std::string accumulator(const kir::ReductionOp& op) const {
    Rendered r;
    r.text = accessText(op.outputs[0]);
    r.dtype = op.outputs[0].tv->dtype();
    return convert(r, computeDtype(r.dtype));
  }

  static std::string combine(const Expr& expr, const std::string& acc, const std::string& x) {
    switch (expr.op()) {
      case OpKind::Sum:
        return acc + " + " + x;
      case OpKind::Prod:
        return acc + " * " + x;
      case OpKind::Max:
        return "braze::maximum(" + acc + ", " + x + ")";
      case OpKind::Min:
        return "braze::minimum(" + acc + ", " + x + ")";
      default:
        BRAZE_INTERNAL_CHECK(false) << "codegen: " << expr.op() << " is not a reduction";
    }
    return "";
  }

  const kir::Kernel& kernel_;
  std::ostream& os_;
  std::set<const TensorView*> global_;
};

}  // namespace

std::string printKernel(const kir::Kernel& kernel, const std::string& name) {
  std::ostringstream os;
  KernelPrinter(kernel, os).print(name);
  return os.str();
}

}  // namespace braze::codegen
