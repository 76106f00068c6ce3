// printKernelIr: kernel IR as text for BRAZE_DUMP=lowering and --print-after. Indices are
// printed as the generated code will compute them.

#include <sstream>

#include "braze/ir/printer.h"
#include "braze/lower/lower.h"

namespace braze {

namespace {

class KirPrinter {
 public:
  explicit KirPrinter(std::ostream& os) : os_(os) {}

  void print(const kir::Kernel& kernel) {
    os_ << "kernel(";
    for (size_t i = 0; i < kernel.parameters.size(); ++i) {
      const kir::Parameter& p = kernel.parameters[i];
      if (i > 0) os_ << ", ";
      os_ << p.name;
      switch (p.kind) {
        case kir::Parameter::Kind::InputTensor:
          os_ << " (input " << p.fusion_position << ")";
          break;
        case kir::Parameter::Kind::OutputTensor:
          os_ << " (output " << p.fusion_position << ")";
          break;
        case kir::Parameter::Kind::GlobalBuffer:
          os_ << " (buffer)";
          break;
        case kir::Parameter::Kind::InputScalar:
          os_ << " (scalar input " << p.fusion_position << ")";
          break;
        case kir::Parameter::Kind::Workspace:
          os_ << " (workspace)";
          break;
      }
    }
    os_ << ") index " << kernel.index_type << "\n";
    static const char* const kNames[] = {"BIDx", "BIDy", "BIDz", "TIDx", "TIDy", "TIDz"};
    for (size_t i = 0; i < kernel.launch.size(); ++i) {
      if (!kernel.launch[i].used) continue;
      os_ << "  launch " << kNames[i] << " = " << kernel.launch[i].size_in_kernel.toString()
          << "\n";
    }
    for (const auto& [check, message] : kernel.launch_checks)
      os_ << "  check " << check->name() << ": " << message << "\n";
    printScope(kernel.body, 1);
  }

 private:
  void indent(int depth) {
    for (int i = 0; i < depth; ++i) os_ << "  ";
  }

  static std::string access(const kir::TensorAccess& a) {
    return a.tv->name() + "[" + (a.offset.defined() ? a.offset.toString() : "?") + "]";
  }

  static std::string operand(const kir::Operand& o) {
    std::string text;
    switch (o.kind) {
      case kir::Operand::Kind::Tensor:
        text = access(o.access);
        break;
      case kir::Operand::Kind::Scalar:
        text = o.scalar->name();
        break;
      case kir::Operand::Kind::Index:
        text = o.index.defined() ? o.index.toString() : "?";
        break;
    }
    if (o.guard.defined()) text += " if (" + o.guard.toString() + ")";
    return text;
  }

  static std::string mask(const char* what, const kir::ParallelMask& m) {
    if (!m.any()) return "";
    std::string text = std::string(" ") + what + "(";
    if (m.x) text += "x";
    if (m.y) text += "y";
    if (m.z) text += "z";
    return text + ")";
  }

  void printScope(const kir::Scope& scope, int depth) {
    for (const kir::StmtPtr& stmt : scope) printStmt(*stmt, depth);
  }

  void printStmt(const kir::Stmt& stmt, int depth) {
    indent(depth);
    switch (stmt.kind()) {
      case kir::StmtKind::ForLoop: {
        const auto& loop = *stmt.as<kir::ForLoop>();
        os_ << "for " << loop.index.toString() << " in 0.." << loop.extent.toString();
        if (loop.parallel_type != ParallelType::Serial) os_ << " (" << loop.parallel_type << ")";
        if (loop.reversed) os_ << " reversed";
        for (const kir::CarriedValue& value : loop.carried)
          os_ << " carries " << value.name << " (" << value.scan->op() << ")";
        os_ << ":\n";
        printScope(loop.body, depth + 1);
        break;
      }
      case kir::StmtKind::IfThenElse: {
        const auto& branch = *stmt.as<kir::IfThenElse>();
        os_ << "if " << branch.predicate.toString() << ":\n";
        printScope(branch.then_body, depth + 1);
        if (!branch.else_body.empty()) {
          indent(depth);
          os_ << "else:\n";
          printScope(branch.else_body, depth + 1);
        }
        break;
      }
      case kir::StmtKind::Allocate: {
        const auto& alloc = *stmt.as<kir::Allocate>();
        os_ << "alloc " << alloc.tv->name() << ": " << alloc.dtype << "[" << alloc.size.toString()
            << "] " << toString(alloc.memory);
        if (alloc.dynamic_offset.defined())
          os_ << " dynamic at byte " << alloc.dynamic_offset.toString();
        os_ << "\n";
        break;
      }
      case kir::StmtKind::TensorOp: {
        const auto& op = *stmt.as<kir::TensorOp>();
        os_ << access(op.output) << " = ";
        if (!op.accumulator.empty()) os_ << op.accumulator << " = ";
        os_ << op.expr->op() << "(";
        if (!op.accumulator.empty()) os_ << op.accumulator << ", ";
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          if (i > 0) os_ << ", ";
          os_ << operand(op.inputs[i]);
        }
        os_ << ")\n";
        break;
      }
      case kir::StmtKind::InitOp: {
        const auto& op = *stmt.as<kir::InitOp>();
        os_ << access(op.output) << " = init " << op.expr->op() << "\n";
        break;
      }
      case kir::StmtKind::ReductionOp: {
        const auto& op = *stmt.as<kir::ReductionOp>();
        for (size_t i = 0; i < op.outputs.size(); ++i)
          os_ << (i > 0 ? ", " : "") << access(op.outputs[i]);
        if (op.finish) {
          os_ << " = finish " << op.expr->op();
        } else {
          os_ << " = " << op.expr->op() << "(" << operand(op.input) << ")";
        }
        os_ << mask("block", op.block) << mask("grid", op.grid);
        if (op.workspace_region.defined()) os_ << " region " << op.workspace_region.toString();
        if (op.input_predicate.defined() && !op.input_predicate.isTrue())
          os_ << " input if (" << op.input_predicate.toString() << ")";
        if (op.write_predicate.defined() && !op.write_predicate.isTrue())
          os_ << " write if (" << op.write_predicate.toString() << ")";
        os_ << "\n";
        break;
      }
      case kir::StmtKind::VectorCopy: {
        const auto& copy = *stmt.as<kir::VectorCopy>();
        os_ << "vector<" << copy.width << "> " << access(copy.dst) << " = " << access(copy.src)
            << (copy.read_only ? "  // read-only path" : "") << "\n";
        break;
      }
      case kir::StmtKind::Sync:
        os_ << "__syncthreads()  // " << stmt.as<kir::Sync>()->reason << "\n";
        break;
      case kir::StmtKind::Comment:
        os_ << "// " << stmt.as<kir::Comment>()->text << "\n";
        break;
    }
  }

  std::ostream& os_;
};

}  // namespace

std::string printKernelIr(const kir::Kernel& kernel) {
  std::ostringstream os;
  KirPrinter(os).print(kernel);
  return os.str();
}

}  // namespace braze
