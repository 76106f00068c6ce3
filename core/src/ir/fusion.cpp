#include "braze/ir/fusion.h"

#include <algorithm>
#include <functional>

namespace braze {

Statement* CloneMap::lookup(const Statement* old) const {
  auto it = map_.find(old);
  BRAZE_INTERNAL_CHECK(it != map_.end())
      << "clone: statement " << old->id()
      << (old->isVal() ? " (" + old->as<Val>()->name() + ")" : std::string())
      << " is referenced but was not cloned before (cloneSubset: it was not chosen)";
  return it->second;
}

Fusion::~Fusion() = default;

void Fusion::adopt(Statement* statement) {
  statement->id_ = numStatements();
  statements_.emplace_back(statement);
  switch (statement->statementKind()) {
    case StatementKind::TensorView:
      static_cast<Val*>(statement)->number_ = num_tensors_++;
      break;
    case StatementKind::Scalar: {
      auto* scalar = static_cast<Scalar*>(statement);
      // Constants print as their value, so only symbolic scalars take a number.
      if (!scalar->isConstant()) scalar->number_ = num_scalars_++;
      break;
    }
    case StatementKind::IterDomain:
      static_cast<Val*>(statement)->number_ = num_iter_domains_++;
      break;
    case StatementKind::Expr:
      break;
  }
}

Scalar* Fusion::constant(ScalarValue value, DataType dtype) {
  return create<Scalar>(dtype, value);
}

void Fusion::addInput(Val* input) {
  BRAZE_USER_CHECK(input != nullptr) << "addInput: the value is null";
  BRAZE_USER_CHECK(&input->fusion() == this)
      << "addInput: " << input->name() << " belongs to another fusion";
  BRAZE_USER_CHECK(input->definition() == nullptr)
      << "addInput: " << input->name() << " is computed by " << input->definition()->op()
      << " inside the fusion and cannot also be an input; make a new input instead";
  BRAZE_USER_CHECK(!input->isA<IterDomain>()) << "addInput: an IterDomain cannot be an input";
  BRAZE_USER_CHECK(!(input->isA<Scalar>() && input->as<Scalar>()->isConstant()))
      << "addInput: " << input->name() << " is a constant; only symbolic scalars can be inputs";
  BRAZE_USER_CHECK(!isInput(input)) << "addInput: " << input->name() << " is already an input";
  inputs_.push_back(input);
}

void Fusion::addOutput(Val* output) {
  BRAZE_USER_CHECK(output != nullptr) << "addOutput: the value is null";
  BRAZE_USER_CHECK(&output->fusion() == this)
      << "addOutput: " << output->name() << " belongs to another fusion";
  BRAZE_USER_CHECK(!output->isA<IterDomain>()) << "addOutput: an IterDomain cannot be an output";
  outputs_.push_back(output);
}

void Fusion::replaceOutput(Val* old, Val* replacement) {
  BRAZE_INTERNAL_CHECK(replacement != nullptr && &replacement->fusion() == this)
      << "replaceOutput: the replacement belongs to another fusion";
  bool found = false;
  for (Val*& output : outputs_) {
    if (output != old) continue;
    output = replacement;
    found = true;
  }
  BRAZE_INTERNAL_CHECK(found) << "replaceOutput: " << old->name() << " is not an output";
  for (auto& alias : aliases_) {
    if (alias.first != old) continue;
    alias.first = replacement;
    // Stored in the input's layout, as the output it replaces.
    auto* tv = replacement->as<TensorView>();
    std::vector<std::optional<bool>> dense;
    for (const IterDomain* id : tv->logicalNoReductions())
      dense.push_back(id->isBroadcast() ? std::nullopt : std::optional<bool>(true));
    tv->setLayout(old->as<TensorView>()->allocationOrder(), std::move(dense));
  }
}

void Fusion::aliasOutputToInput(Val* output, Val* input) {
  BRAZE_USER_CHECK(output != nullptr && input != nullptr)
      << "aliasOutputToInput: the output or the input is null";
  BRAZE_USER_CHECK(isOutput(output))
      << "aliasOutputToInput: " << output->name() << " is not an output of this fusion; add it "
      << "with addOutput first";
  BRAZE_USER_CHECK(isInput(input) && input->isA<TensorView>())
      << "aliasOutputToInput: " << input->name()
      << " is not a tensor input of this fusion; an output can only be written into one";
  BRAZE_USER_CHECK(output->isA<TensorView>())
      << "aliasOutputToInput: " << output->name() << " is a scalar; only tensors can be "
      << "written into an input";
  BRAZE_USER_CHECK(!isInput(output))
      << "aliasOutputToInput: " << output->name()
      << " is an input itself; write a computed tensor into " << input->name();
  auto* out = output->as<TensorView>();
  auto* in = input->as<TensorView>();
  BRAZE_USER_CHECK(out->dtype() == in->dtype() && out->rank() == in->rank())
      << "aliasOutputToInput: " << out->name() << " (" << out->dtype() << ", rank " << out->rank()
      << ") cannot be written into " << in->name() << " (" << in->dtype() << ", rank " << in->rank()
      << "): dtype and rank must agree; cast or reshape the output first";
  BRAZE_USER_CHECK(!readOnlyLoads(input))
      << "aliasOutputToInput: " << input->name() << " is read through the read-only path "
      << "(setReadOnlyLoads), which would not see " << output->name() << " written into it";
  for (const auto& [o, i] : aliases_) {
    BRAZE_USER_CHECK(o != output) << "aliasOutputToInput: " << output->name()
                                  << " is already written into " << i->name();
    BRAZE_USER_CHECK(i != input) << "aliasOutputToInput: " << o->name() << " is already written "
                                 << "into " << input->name() << "; an input takes one output";
  }
  const std::vector<std::optional<bool>>& contiguity = in->contiguity();
  for (size_t d = 0; d < contiguity.size(); ++d) {
    BRAZE_USER_CHECK(contiguity[d].value_or(true))
        << "aliasOutputToInput: " << in->name() << " is not contiguous at dim " << d
        << " in its definition, so " << out->name()
        << " cannot be written into it in place; define the input contiguous (its strides "
        << "dense in some order), or return the output and copy it";
  }
  const bool identity_order =
      std::is_sorted(out->allocationOrder().begin(), out->allocationOrder().end());
  BRAZE_USER_CHECK(identity_order || out->allocationOrder() == in->allocationOrder())
      << "aliasOutputToInput: " << out->name() << " has a stride order of its own that differs "
      << "from " << in->name() << "'s layout; drop the stride_order or make them agree";
  std::vector<std::optional<bool>> dense;
  for (const IterDomain* id : out->logicalNoReductions())
    dense.push_back(id->isBroadcast() ? std::nullopt : std::optional<bool>(true));
  out->setLayout(in->allocationOrder(), std::move(dense));
  aliases_.emplace_back(output, input);
}

Val* Fusion::aliasedInput(const Val* output) const {
  for (const auto& [o, i] : aliases_) {
    if (o == output) return i;
  }
  return nullptr;
}

Val* Fusion::outputWrittenInto(const Val* input) const {
  for (const auto& [o, i] : aliases_) {
    if (i == input) return o;
  }
  return nullptr;
}

bool Fusion::isInput(const Val* val) const {
  return inputIndex(val) >= 0;
}

bool Fusion::isOutput(const Val* val) const {
  return std::find(outputs_.begin(), outputs_.end(), val) != outputs_.end();
}

int64_t Fusion::inputIndex(const Val* input) const {
  auto it = std::find(inputs_.begin(), inputs_.end(), input);
  return it == inputs_.end() ? -1 : static_cast<int64_t>(it - inputs_.begin());
}

namespace {

// Post-order DFS over definitions. Iterative, so a long chain of ops cannot overflow the stack.
// Statement ids are dense per fusion, so `visited` is a flag per statement (schedulers walk the
// exprs of every candidate segment; a hash set made this walk most of its cost).
std::vector<Expr*> definitionsInTopologicalOrder(const std::vector<Val*>& roots,
                                                 int64_t num_statements) {
  std::vector<Expr*> order;
  std::vector<bool> visited(static_cast<size_t>(num_statements), false);
  auto visit = [&visited](const Expr* expr) {
    const auto id = static_cast<size_t>(expr->id());
    if (visited[id]) return false;
    visited[id] = true;
    return true;
  };
  struct Frame {
    Expr* expr;
    size_t next_input;
  };
  std::vector<Frame> stack;
  for (Val* root : roots) {
    Expr* root_def = root->definition();
    if (root_def == nullptr || !visit(root_def)) continue;
    stack.push_back({root_def, 0});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next_input < frame.expr->inputs().size()) {
        Expr* def = frame.expr->inputs()[frame.next_input++]->definition();
        if (def != nullptr && visit(def)) stack.push_back({def, 0});
        continue;
      }
      order.push_back(frame.expr);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace

std::vector<Expr*> Fusion::exprs() const {
  return definitionsInTopologicalOrder(outputs_, numStatements());
}

std::vector<Expr*> Fusion::scalarDefinitionChain(const Val* val) {
  return definitionsInTopologicalOrder({const_cast<Val*>(val)}, val->fusion().numStatements());
}

std::vector<TensorView*> Fusion::allTensors() const {
  std::vector<TensorView*> tensors;
  for (const auto& statement : statements_) {
    if (auto* tv = statement->dynCast<TensorView>()) tensors.push_back(tv);
  }
  return tensors;
}

void Fusion::setLaunchBounds(int64_t max_threads_per_block, int64_t min_blocks_per_sm) {
  BRAZE_USER_CHECK(max_threads_per_block >= 1 && max_threads_per_block <= 1024)
      << "setLaunchBounds(" << max_threads_per_block << ", " << min_blocks_per_sm
      << "): a block has 1 to 1024 threads; state the largest block the schedule launches";
  BRAZE_USER_CHECK(min_blocks_per_sm >= 0)
      << "setLaunchBounds(" << max_threads_per_block << ", " << min_blocks_per_sm
      << "): min_blocks_per_sm is a count of blocks per SM, >= 0 (0: no minimum)";
  launch_bounds_ = LaunchBounds{max_threads_per_block, min_blocks_per_sm};
}

void Fusion::assumeExtent(Scalar* extent, int64_t value) {
  BRAZE_USER_CHECK(extent != nullptr && &extent->fusion() == this)
      << "assumeExtent: the extent must be a scalar of this fusion";
  BRAZE_USER_CHECK(!extent->constantInt())
      << "assumeExtent(" << extent->name() << ", " << value
      << "): the extent is already the constant " << *extent->constantInt();
  BRAZE_USER_CHECK(value >= 1) << "assumeExtent(" << extent->name() << ", " << value
                               << "): an extent the kernel is compiled for is at least 1";
  for (auto& [assumed, assumed_value] : assumed_extents_) {
    if (assumed == extent) {
      assumed_value = value;
      return;
    }
  }
  assumed_extents_.emplace_back(extent, value);
}

void Fusion::setReadOnlyLoads(TensorView* input) {
  BRAZE_USER_CHECK(input != nullptr && isInput(input))
      << "setReadOnlyLoads: " << (input == nullptr ? std::string("null") : input->name())
      << " is not a tensor input of this fusion; only inputs can be read through the read-only "
      << "path";
  BRAZE_USER_CHECK(outputWrittenInto(input) == nullptr)
      << "setReadOnlyLoads: an output is written into " << input->name()
      << " (aliasOutputToInput), so its loads must see the kernel's stores; read it plainly";
  if (!readOnlyLoads(input)) read_only_inputs_.push_back(input);
}

bool Fusion::readOnlyLoads(const Val* input) const {
  return std::find(read_only_inputs_.begin(), read_only_inputs_.end(), input) !=
         read_only_inputs_.end();
}

void Fusion::setOpaqueToCompiler(TensorView* tv) {
  BRAZE_USER_CHECK(tv != nullptr && &tv->fusion() == this && !isInput(tv))
      << "setOpaqueToCompiler: " << (tv == nullptr ? std::string("null") : tv->name())
      << " is not a computed tensor of this fusion; name a tensor an Expr of it computes";
  if (!opaqueToCompiler(tv)) opaque_tensors_.push_back(tv);
}

bool Fusion::opaqueToCompiler(const Val* tv) const {
  return std::find(opaque_tensors_.begin(), opaque_tensors_.end(), tv) != opaque_tensors_.end();
}

void Fusion::copyStatements(std::span<const Statement* const> statements,
                            const CloneSubstitute& substitute, Fusion& target, CloneMap& map) {
  // Every statement refers only to statements created before it, except a TensorView's
  // domains and an Expr's inputs and outputs, which scheduling may rewire to later statements
  // (see TensorView::cloneInto, Expr::cloneInto): those are connected in a second pass.
  std::vector<const Statement*> copied;
  copied.reserve(statements.size());
  for (const Statement* statement : statements) {
    Statement* twin = substitute ? substitute(*statement, target, map) : nullptr;
    if (twin == nullptr) {
      twin = statement->cloneInto(target, map);
      copied.push_back(statement);
    }
    map.map_.emplace(statement, twin);
  }
  for (const Statement* statement : copied) {
    if (const auto* tv = statement->dynCast<TensorView>()) {
      std::vector<IterDomain*> loop;
      loop.reserve(tv->loop().size());
      for (IterDomain* id : tv->loop()) loop.push_back(map[id]);
      map[tv]->setLoop(std::move(loop));
      map[tv]->restoreDomains(*tv, map);
    } else if (const auto* expr = statement->dynCast<Expr>()) {
      map[expr]->restoreEdges(*expr, map);
    }
  }
}

void Fusion::setKernelTemplate(KernelTemplate kernel) {
  BRAZE_USER_CHECK(kernel.source.find("BRAZE_KERNEL_NAME") != std::string::npos)
      << "setKernelTemplate: the source must spell its entry point BRAZE_KERNEL_NAME";
  for (size_t i = 0; i < kernel.parameters.size(); ++i) {
    const TensorView* tensor = kernel.parameters[i].tensor;
    BRAZE_USER_CHECK(tensor != nullptr && &tensor->fusion() == this &&
                     (isInput(tensor) || isOutput(tensor)))
        << "setKernelTemplate: parameter " << i << " is not an input or output of the fusion";
  }
  for (const Val* size : {kernel.grid[0], kernel.grid[1], kernel.grid[2], kernel.block[0],
                          kernel.block[1], kernel.block[2], kernel.dynamic_shared_memory_bytes}) {
    BRAZE_USER_CHECK(size == nullptr || (&size->fusion() == this && size->isA<Scalar>()))
        << "setKernelTemplate: a launch size is not a scalar of the fusion";
  }
  for (const int64_t ctas : kernel.cluster) {
    BRAZE_USER_CHECK(ctas >= 1 && ctas <= 16)
        << "setKernelTemplate: a cluster dim of " << ctas << " CTAs; clusters are 1 to 16 per dim";
  }
  if (kernel.epilogue) {
    const KernelTemplate::Epilogue& epilogue = *kernel.epilogue;
    BRAZE_USER_CHECK(epilogue.anchor != nullptr && &epilogue.anchor->fusion() == this)
        << "setKernelTemplate: the epilogue's anchor is not a tensor of the fusion";
    BRAZE_USER_CHECK(epilogue.accumulator_bias == nullptr || isInput(epilogue.accumulator_bias))
        << "setKernelTemplate: the epilogue's accumulator bias is not an input of the fusion";
    for (const TensorView* tv : epilogue.prologue) {
      BRAZE_USER_CHECK(tv != nullptr && &tv->fusion() == this && tv->definition() != nullptr &&
                       std::all_of(tv->definition()->inputs().begin(),
                                   tv->definition()->inputs().end(),
                                   [&](const Val* in) { return isInput(in); }))
          << "setKernelTemplate: a prologue tensor of the epilogue ("
          << (tv != nullptr ? tv->name() : std::string("null"))
          << ") is not computed by the fusion from its inputs";
    }
    BRAZE_USER_CHECK(epilogue.vector >= 1 && epilogue.vector <= 8)
        << "setKernelTemplate: the epilogue takes " << epilogue.vector
        << " elements per call; 1 to 8";
  }
  if (kernel.row_program) {
    BRAZE_USER_CHECK(!kernel.epilogue)
        << "setKernelTemplate: a template has an epilogue or a row program, not both";
    BRAZE_USER_CHECK(kernel.parameters.empty())
        << "setKernelTemplate: a row program passes every tensor itself; list no parameters";
    BRAZE_USER_CHECK(kernel.row_program->vector >= 1 && kernel.row_program->vector <= 16)
        << "setKernelTemplate: the row program takes " << kernel.row_program->vector
        << " elements per call; 1 to 16";
  }
  kernel_template_ = std::make_shared<const KernelTemplate>(std::move(kernel));
}

std::unique_ptr<Fusion> Fusion::clone(CloneMap* map_out) const {
  auto copy = std::make_unique<Fusion>();
  CloneMap map;
  std::vector<const Statement*> all;
  all.reserve(statements_.size());
  for (const auto& statement : statements_) all.push_back(statement.get());
  copyStatements(all, {}, *copy, map);
  BRAZE_INTERNAL_CHECK(copy->numStatements() == numStatements()) << "clone changed statement ids";
  for (Val* input : inputs_) copy->inputs_.push_back(map[input]);
  for (Val* output : outputs_) copy->outputs_.push_back(map[output]);
  for (const auto& [output, input] : aliases_) copy->aliases_.emplace_back(map[output], map[input]);
  copy->launch_bounds_ = launch_bounds_;
  for (const auto& [extent, value] : assumed_extents_)
    copy->assumed_extents_.emplace_back(map[extent], value);
  copy->cooperative_launch_ = cooperative_launch_;
  copy->packed_half_registers_ = packed_half_registers_;
  for (Val* input : read_only_inputs_) copy->read_only_inputs_.push_back(map[input]);
  for (Val* tv : opaque_tensors_) copy->opaque_tensors_.push_back(map[tv]);
  if (kernel_template_ != nullptr) {
    KernelTemplate kernel = *kernel_template_;
    for (KernelTemplate::Parameter& parameter : kernel.parameters)
      parameter.tensor = map[parameter.tensor];
    for (Val*& size : kernel.grid) size = map[size];
    for (Val*& size : kernel.block) size = map[size];
    kernel.dynamic_shared_memory_bytes = map[kernel.dynamic_shared_memory_bytes];
    for (auto& check : kernel.launch_checks) check.first = map[check.first];
    if (kernel.row_program)
      kernel.row_program->workspace_bytes = map[kernel.row_program->workspace_bytes];
    if (kernel.epilogue) {
      kernel.epilogue->anchor = map[kernel.epilogue->anchor];
      kernel.epilogue->accumulator_bias = map[kernel.epilogue->accumulator_bias];
      for (TensorView*& tv : kernel.epilogue->prologue) tv = map[tv];
    }
    copy->kernel_template_ = std::make_shared<const KernelTemplate>(std::move(kernel));
  }
  if (map_out != nullptr) *map_out = std::move(map);
  return copy;
}

std::unique_ptr<Fusion> Fusion::cloneSubset(std::span<const Statement* const> statements,
                                            const CloneSubstitute& substitute,
                                            CloneMap* map_out) const {
  std::vector<const Statement*> chosen(statements.begin(), statements.end());
  for (const Statement* statement : chosen) {
    BRAZE_INTERNAL_CHECK(statement != nullptr && &statement->fusion() == this)
        << "cloneSubset: a chosen statement is null or belongs to another fusion";
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Statement* a, const Statement* b) { return a->id() < b->id(); });
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  auto copy = std::make_unique<Fusion>();
  CloneMap map;
  copyStatements(chosen, substitute, *copy, map);
  if (map_out != nullptr) *map_out = std::move(map);
  return copy;
}

TensorView* makeInputTensor(Fusion& fusion, const TensorSpec& spec) {
  std::vector<IterDomain*> logical;
  logical.reserve(spec.sizes.size());
  for (size_t i = 0; i < spec.sizes.size(); ++i) {
    const int64_t size = spec.sizes[i];
    BRAZE_USER_CHECK(size >= -1)
        << "makeInputTensor: size " << size << " at dim " << i
        << " is invalid; use -1 for a size known at run time, 1 for a broadcast dim, or the "
           "fixed size";
    if (size == 1) {
      logical.push_back(fusion.create<IterDomain>(fusion.constantIndex(1), IterType::Broadcast));
    } else {
      Scalar* extent =
          size == -1 ? fusion.create<Scalar>(DataType::Index) : fusion.constantIndex(size);
      logical.push_back(fusion.create<IterDomain>(extent, IterType::Iteration));
    }
  }
  auto* tv = fusion.create<TensorView>(spec.dtype, std::move(logical));
  if (!spec.contiguity.empty() || !spec.allocation_order.empty()) {
    std::vector<int64_t> order = spec.allocation_order;
    if (order.empty()) order = tv->allocationOrder();
    std::vector<std::optional<bool>> contiguity = spec.contiguity;
    if (contiguity.empty()) contiguity = tv->contiguity();
    tv->setLayout(std::move(order), std::move(contiguity));
  }
  fusion.addInput(tv);
  return tv;
}

TensorView* makeSymbolicTensor(Fusion& fusion, int64_t rank, DataType dtype) {
  BRAZE_USER_CHECK(rank >= 0) << "makeSymbolicTensor: rank " << rank << " is negative";
  return makeInputTensor(fusion, {.dtype = dtype, .sizes = std::vector<int64_t>(rank, -1)});
}

Scalar* makeInputScalar(Fusion& fusion, DataType dtype) {
  auto* scalar = fusion.create<Scalar>(dtype);
  fusion.addInput(scalar);
  return scalar;
}

}  // namespace braze
