// segmentFusion: splits a fusion into segments a checker accepts.
//
// The merge graph has one node per tensor Expr that is neither forwarded nor a scalar Expr
// (those are replicated into each segment that needs them). Groups of nodes start as one node
// each and merge when the checker accepts the merged group:
//
//  1. producer-consumer pairs, the pairs that save the most bytes moving through memory first,
//     so that the largest intermediates stay on chip when merges compete (a tensor's bytes, twice
//     when the merge saves its write too: an intermediate with one reader). Merging two groups that
//     another path connects (A -> C -> B) would make a cycle; the candidate is then the convex
//     hull, A, B and every group on a path between them (a normalization's row chain: the centered
//     rows, the reduction of their squares and its broadcast back, merged at once).
//  2. siblings: groups that read a common tensor (two column sums of one input), by its bytes.
//
// No group holds a segment_set together with a reader of its output (segment_set asks for that
// boundary); such merges are refused without asking the checker.
//
// Each phase runs in rounds over its candidates (sorted once) until a round merges nothing; the
// phases repeat while siblings merge. Then (recompute_intermediates.h) a group that reads an
// intermediate computed by cheap ops from smaller sources computes it again instead, and the
// writer drops it. Every question is asked at most once: answers are cached by the group's
// sorted nodes, and by the outputs when they are not the ones the nodes imply.

#include <algorithm>
#include <climits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "braze/ir/printer.h"
#include "braze/segment/segmented_fusion.h"
#include "segment/forwarded_exprs.h"
#include "segment/group_graph.h"
#include "segment/recompute_intermediates.h"

namespace braze {

namespace {

using segment_detail::GroupGraph;
using segment_detail::MergePlan;
using segment_detail::RecomputedGroup;

// "T5 = sum(T3)", "T5, T6, T7 = welford(T3)": how errors name an Expr.
std::string describeExpr(const Expr& expr) {
  std::ostringstream os;
  for (size_t i = 0; i < expr.outputs().size(); ++i)
    os << (i ? ", " : "") << expr.outputs()[i]->name();
  os << " = " << expr.op() << "(";
  for (size_t i = 0; i < expr.inputs().size(); ++i)
    os << (i ? ", " : "") << expr.inputs()[i]->name();
  os << ")";
  return os.str();
}

struct KeyHash {
  size_t operator()(const std::vector<int32_t>& key) const {
    uint64_t hash = 1469598103934665603ull;
    for (int32_t value : key) {
      hash ^= static_cast<uint32_t>(value);
      hash *= 1099511628211ull;
    }
    return static_cast<size_t>(hash);
  }
};

// A merge of the groups of two nodes, worth the bytes it would keep on chip.
struct Candidate {
  double bytes;
  int32_t first;
  int32_t second;
};

void sortCandidates(std::vector<Candidate>& candidates) {
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.first != b.first) return a.first < b.first;
    return a.second < b.second;
  });
}

enum class Kind : uint8_t { None, Node, Forwarded, Scalar };

class Segmenter : public segment_detail::RecomputeGraph {
 public:
  Segmenter(const Fusion& fusion, SegmentChecker& checker, const SegmenterOptions& options)
      : fusion_(fusion),
        checker_(checker),
        options_(options),
        kind_(slots(), Kind::None),
        node_of_(slots(), -1),
        output_rank_(slots(), INT32_MAX),
        stamp_(slots(), 0) {}

  SegmentedFusion run() {
    classify();
    SegmentedFusion result;
    result.original = &fusion_;
    if (nodes_.empty()) return result;

    std::vector<std::pair<int32_t, int32_t>> edges;
    for (const Candidate& c : verticalCandidates()) edges.emplace_back(c.first, c.second);
    graph_ = std::make_unique<GroupGraph>(static_cast<int32_t>(nodes_.size()), edges);

    std::vector<int32_t> everything(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) everything[i] = static_cast<int32_t>(i);
    if (const std::optional<std::string>& whole = check(everything, forwarded_outputs_)) {
      result.segments.push_back(segmentOf(everything, forwarded_outputs_));
      result.segments.back().scheduler = *whole;
      return result;
    }

    std::vector<Candidate> vertical = verticalCandidates();
    std::vector<Candidate> siblings = siblingCandidates();
    sortCandidates(vertical);
    sortCandidates(siblings);
    bool siblings_merged = false;
    do {
      while (mergeRound(vertical)) {
      }
      siblings_merged = false;
      while (mergeRound(siblings)) siblings_merged = true;
    } while (siblings_merged);

    std::vector<std::vector<int32_t>> merged;
    for (int32_t g : graph_->groupsInOrder()) {
      if (!check(graph_->members(g), {})) throwRefused(graph_->members(g));
      merged.push_back(graph_->members(g));
    }
    std::vector<RecomputedGroup> groups;
    if (options_.recompute_intermediates) {
      groups = segment_detail::recomputeIntermediates(*this, merged);
    } else {
      for (std::vector<int32_t>& members : merged)
        groups.push_back({std::move(members), {}, false});
    }
    std::vector<std::vector<const Val*>> extras(groups.size());
    std::vector<Segment> standalone;
    assignForwardedOutputs(groups, extras, standalone);

    for (Segment& segment : standalone) result.segments.push_back(std::move(segment));
    for (size_t i = 0; i < groups.size(); ++i) {
      result.segments.push_back(segmentOf(groups[i], extras[i]));
      result.segments.back().scheduler = *check(groups[i], extras[i]);
    }
    for (size_t i = 0; i < result.segments.size(); ++i)
      result.segments[i].id = static_cast<int64_t>(i);
    return result;
  }

 private:
  size_t slots() const { return static_cast<size_t>(fusion_.numStatements()); }
  size_t at(const Statement* s) const { return static_cast<size_t>(s->id()); }
  Kind kindOf(const Expr* expr) const { return kind_[at(expr)]; }

  void classify() {
    exprs_ = fusion_.exprs();
    const std::vector<bool> forwarded = options_.forward_input_chains
                                            ? segment_detail::forwardedExprs(exprs_)
                                            : std::vector<bool>(exprs_.size(), false);
    for (size_t i = 0; i < fusion_.outputs().size(); ++i) {
      int32_t& rank = output_rank_[at(fusion_.outputs()[i])];
      rank = std::min(rank, static_cast<int32_t>(i));
    }
    for (size_t i = 0; i < exprs_.size(); ++i) {
      const Expr* expr = exprs_[i];
      const bool tensor = std::any_of(expr->outputs().begin(), expr->outputs().end(),
                                      [](const Val* v) { return v->isA<TensorView>(); });
      if (!tensor) {
        kind_[at(expr)] = Kind::Scalar;
      } else if (forwarded[i]) {
        kind_[at(expr)] = Kind::Forwarded;
        for (const Val* output : expr->outputs()) {
          if (output->isA<TensorView>() && isOriginalOutput(output))
            forwarded_outputs_.push_back(output);
        }
      } else {
        kind_[at(expr)] = Kind::Node;
        node_of_[at(expr)] = static_cast<int32_t>(nodes_.size());
        nodes_.push_back(expr);
      }
    }
  }

  bool isOriginalOutput(const Val* val) const { return output_rank_[at(val)] != INT32_MAX; }

  // RecomputeGraph.
  const std::vector<const Expr*>& nodes() const override { return nodes_; }
  int32_t nodeOf(const Expr& expr) const override { return node_of_[at(&expr)]; }
  const TensorView* memorySource(const TensorView& tv) const override { return memorySource(&tv); }
  bool isOriginalOutput(const Val& val) const override { return isOriginalOutput(&val); }
  bool accepts(const std::vector<int32_t>& nodes, std::vector<const Val*> outputs) override {
    return checkWriting(nodes, std::move(outputs)).has_value();
  }

  uint32_t nextStamp() {
    if (++stamp_value_ == 0) {
      std::fill(stamp_.begin(), stamp_.end(), 0);
      stamp_value_ = 1;
    }
    return stamp_value_;
  }

  // The bytes a tensor takes in memory, for ordering merges (SegmenterOptions::tensor_bytes).
  double bytesOf(const TensorView& tv) const override {
    if (options_.tensor_bytes) {
      if (std::optional<int64_t> bytes = options_.tensor_bytes(tv))
        return static_cast<double>(*bytes);
    }
    auto bytes = static_cast<double>(sizeInBytes(tv.dtype()));
    for (const IterDomain* id : tv.logicalNoReductions()) {
      if (id->isBroadcast() && !id->hasExpandedExtent()) continue;
      const std::optional<int64_t> extent = id->logicalExtent()->constantInt();
      bytes *= static_cast<double>(extent.value_or(SegmenterOptions::kSymbolicExtent));
    }
    return bytes;
  }

  // What merging the producer of `tv` with one consumer saves moving through memory: its write
  // and that read when the consumer is the only reader of an intermediate, else that read.
  double savedBytes(const TensorView& tv) const {
    const int64_t readers =
        std::count_if(tv.uses().begin(), tv.uses().end(),
                      [this](const Expr* use) { return kindOf(use) == Kind::Node; });
    const bool written_anyway = readers > 1 || isOriginalOutput(&tv);
    return bytesOf(tv) * (written_anyway ? 1.0 : 2.0);
  }

  // One candidate per (tensor, consumer) between two nodes.
  std::vector<Candidate> verticalCandidates() const {
    std::vector<Candidate> candidates;
    for (size_t c = 0; c < nodes_.size(); ++c) {
      const Expr* consumer = nodes_[c];
      for (size_t i = 0; i < consumer->inputs().size(); ++i) {
        const auto* tv = consumer->inputs()[i]->dynCast<TensorView>();
        if (tv == nullptr || tv->definition() == nullptr) continue;
        if (std::find(consumer->inputs().begin(), consumer->inputs().begin() + i, tv) !=
            consumer->inputs().begin() + i)
          continue;  // read twice (x * x)
        const int32_t producer = node_of_[at(tv->definition())];
        if (producer < 0) continue;  // forwarded
        candidates.push_back({savedBytes(*tv), producer, static_cast<int32_t>(c)});
      }
    }
    return candidates;
  }

  // The tensor a node reads from memory for `tv`: the fusion input a forwarded chain starts
  // from, the tensor itself when another node computes it, or null for a factory's chain.
  const TensorView* memorySource(const TensorView* tv) const {
    while (const Expr* def = tv->definition()) {
      if (kindOf(def) != Kind::Forwarded) return tv;
      const TensorView* next = nullptr;
      for (const Val* input : def->inputs()) {
        if (const auto* t = input->dynCast<TensorView>()) next = t;
      }
      if (next == nullptr) return nullptr;
      tv = next;
    }
    return tv;
  }

  // Consecutive readers (in topological order) of each tensor in memory.
  std::vector<Candidate> siblingCandidates() const {
    std::unordered_map<const TensorView*, std::vector<int32_t>> readers;
    for (size_t c = 0; c < nodes_.size(); ++c) {
      for (const Val* input : nodes_[c]->inputs()) {
        const auto* tv = input->dynCast<TensorView>();
        const TensorView* source = tv ? memorySource(tv) : nullptr;
        if (source == nullptr) continue;
        std::vector<int32_t>& list = readers[source];
        if (list.empty() || list.back() != static_cast<int32_t>(c))
          list.push_back(static_cast<int32_t>(c));
      }
    }
    std::vector<Candidate> candidates;
    for (const auto& [source, list] : readers) {
      for (size_t i = 1; i < list.size(); ++i)
        candidates.push_back({bytesOf(*source), list[i - 1], list[i]});
    }
    return candidates;
  }

  // The nodes' Exprs and the forwarded Exprs they need.
  std::vector<const Expr*> exprsOf(const std::vector<int32_t>& members) {
    const uint32_t stamp = nextStamp();
    std::vector<const Expr*> exprs;
    for (int32_t node : members) exprs.push_back(nodes_[static_cast<size_t>(node)]);
    for (size_t i = 0; i < exprs.size(); ++i) {
      for (const Val* input : exprs[i]->inputs()) {
        const Expr* def = input->definition();
        if (def == nullptr || kindOf(def) != Kind::Forwarded || stamp_[at(def)] == stamp) continue;
        stamp_[at(def)] = stamp;
        exprs.push_back(def);
      }
    }
    return exprs;
  }

  // What the nodes compute that an original output or a node outside them reads, and `extras`
  // (forwarded tensors this group writes): original outputs first, in their order.
  std::vector<const Val*> outputsOf(const std::vector<int32_t>& members,
                                    const std::vector<const Val*>& extras) {
    const uint32_t stamp = nextStamp();
    for (int32_t node : members) stamp_[at(nodes_[static_cast<size_t>(node)])] = stamp;
    std::vector<const Val*> outputs = extras;
    for (int32_t node : members) {
      for (const Val* output : nodes_[static_cast<size_t>(node)]->outputs()) {
        if (!output->isA<TensorView>()) continue;
        const bool read_outside = std::any_of(
            output->uses().begin(), output->uses().end(),
            [&](const Expr* use) { return kindOf(use) == Kind::Node && stamp_[at(use)] != stamp; });
        if (read_outside || isOriginalOutput(output)) outputs.push_back(output);
      }
    }
    sortOutputs(outputs);
    return outputs;
  }

  // Original outputs first, in their order, then the others by id.
  void sortOutputs(std::vector<const Val*>& outputs) const {
    std::sort(outputs.begin(), outputs.end(), [this](const Val* a, const Val* b) {
      const int32_t ra = output_rank_[at(a)];
      const int32_t rb = output_rank_[at(b)];
      return ra != rb ? ra < rb : a->id() < b->id();
    });
  }

  Segment segmentOf(const std::vector<int32_t>& members, const std::vector<const Val*>& extras) {
    const std::vector<const Expr*> exprs = exprsOf(members);
    const std::vector<const Val*> outputs = outputsOf(members, extras);
    return extractSegment(fusion_, exprs, outputs);
  }

  // A group after recomputeIntermediates, writing `extras` too: one that did not change is
  // asked and extracted as merging left it.
  Segment segmentOf(const RecomputedGroup& group, const std::vector<const Val*>& extras) {
    if (!group.changed) return segmentOf(group.nodes, extras);
    std::vector<const Val*> outputs = group.outputs;
    outputs.insert(outputs.end(), extras.begin(), extras.end());
    sortOutputs(outputs);
    return extractSegment(fusion_, exprsOf(group.nodes), outputs);
  }

  const std::optional<std::string>& check(const RecomputedGroup& group,
                                          const std::vector<const Val*>& extras) {
    if (!group.changed) return check(group.nodes, extras);
    std::vector<const Val*> outputs = group.outputs;
    outputs.insert(outputs.end(), extras.begin(), extras.end());
    return checkWriting(group.nodes, std::move(outputs));
  }

  // The checker's answer for the segment of `nodes` (ascending) writing `outputs`, asked once.
  // Outputs that the nodes imply (what outputsOf gives) share check()'s answer; others are
  // cached by the nodes and the outputs' ids.
  const std::optional<std::string>& checkWriting(const std::vector<int32_t>& nodes,
                                                 std::vector<const Val*> outputs) {
    if (holdsSegmentSetAndReader(nodes) || spansStages(nodes)) return kRefused;
    sortOutputs(outputs);
    if (outputs == outputsOf(nodes, {})) return check(nodes, {});
    std::vector<int32_t> key = nodes;
    key.push_back(-2);
    for (const Val* output : outputs) key.push_back(static_cast<int32_t>(output->id()));
    auto it = answers_.find(key);
    if (it != answers_.end()) return it->second;
    std::optional<std::string> answer =
        checker_.accepts(extractSegment(fusion_, exprsOf(nodes), outputs));
    return answers_.emplace(std::move(key), std::move(answer)).first->second;
  }

  // The checker's answer for a group (`members` ascending) that also writes `extras`, asked
  // once.
  const std::optional<std::string>& check(const std::vector<int32_t>& members,
                                          const std::vector<const Val*>& extras) {
    if (holdsSegmentSetAndReader(members) || spansStages(members)) return kRefused;
    std::vector<int32_t> key = members;
    if (!extras.empty()) {
      key.push_back(-1);
      for (const Val* extra : extras) key.push_back(static_cast<int32_t>(extra->id()));
      std::sort(key.end() - static_cast<std::ptrdiff_t>(extras.size()), key.end());
    }
    auto it = answers_.find(key);
    if (it != answers_.end()) return it->second;
    std::optional<std::string> answer = checker_.accepts(segmentOf(members, extras));
    return answers_.emplace(std::move(key), std::move(answer)).first->second;
  }

  // Whether `nodes` hold a segment_set and a reader of its output: the copy promises that
  // they run in different kernels, so no segment may hold both (every other merge is asked).
  bool holdsSegmentSetAndReader(const std::vector<int32_t>& nodes) {
    const uint32_t stamp = nextStamp();
    for (int32_t node : nodes) stamp_[at(nodes_[static_cast<size_t>(node)])] = stamp;
    for (int32_t node : nodes) {
      const Expr* expr = nodes_[static_cast<size_t>(node)];
      if (expr->op() != OpKind::SegmentSet) continue;
      for (const Expr* use : expr->output(0)->uses()) {
        if (kindOf(use) == Kind::Node && stamp_[at(use)] == stamp) return true;
      }
    }
    return false;
  }

  // Whether `nodes` hold Exprs of two stages (SegmenterOptions::stage_of).
  bool spansStages(const std::vector<int32_t>& nodes) const {
    if (!options_.stage_of || nodes.empty()) return false;
    const int32_t first = options_.stage_of(*nodes_[static_cast<size_t>(nodes.front())]);
    return std::any_of(nodes.begin() + 1, nodes.end(), [&](int32_t node) {
      return options_.stage_of(*nodes_[static_cast<size_t>(node)]) != first;
    });
  }

  bool mergeRound(const std::vector<Candidate>& candidates) {
    bool merged = false;
    std::unordered_set<std::vector<int32_t>, KeyHash> tried;
    for (const Candidate& candidate : candidates) {
      const int32_t a = graph_->groupOf(candidate.first);
      const int32_t b = graph_->groupOf(candidate.second);
      if (a == b) continue;
      // Versions change when a group grows: the same two groups are tried again then.
      if (!tried
               .insert({a, static_cast<int32_t>(graph_->version(a)), b,
                        static_cast<int32_t>(graph_->version(b))})
               .second)
        continue;
      const MergePlan plan = graph_->plan(a, b);
      std::vector<int32_t> members;
      for (int32_t g : plan.groups) {
        const std::vector<int32_t>& m = graph_->members(g);
        members.insert(members.end(), m.begin(), m.end());
      }
      std::sort(members.begin(), members.end());
      if (!check(members, {})) continue;
      graph_->merge(plan);
      merged = true;
    }
    return merged;
  }

  [[noreturn]] void throwRefused(const std::vector<int32_t>& members) {
    BRAZE_INTERNAL_CHECK(members.size() == 1)
        << "segmentFusion: a merged group lost the checker's acceptance; please report";
    const Segment segment = segmentOf(members, {});
    const std::string reason = checker_.refusalReason(segment);
    BRAZE_THROW() << "segmentFusion: no scheduler accepts "
                  << describeExpr(*nodes_[static_cast<size_t>(members.front())])
                  << ", neither alone nor merged with its neighbours"
                  << (reason.empty() ? std::string(".") : ": " + reason) << "\nIts segment alone:\n"
                  << printMath(*segment.fusion);
  }

  // Each forwarded tensor that is an original output is written by the first group (in order)
  // that computes it and is still accepted with the extra output, else by a segment of its own
  // (placed first: it reads fusion inputs only).
  void assignForwardedOutputs(const std::vector<RecomputedGroup>& groups,
                              std::vector<std::vector<const Val*>>& extras,
                              std::vector<Segment>& standalone) {
    if (forwarded_outputs_.empty()) return;
    std::vector<std::vector<const Expr*>> computed;
    for (const RecomputedGroup& group : groups) {
      std::vector<const Expr*> exprs = exprsOf(group.nodes);
      std::sort(exprs.begin(), exprs.end());
      computed.push_back(std::move(exprs));
    }
    for (const Val* output : forwarded_outputs_) {
      bool written = false;
      for (size_t i = 0; i < groups.size() && !written; ++i) {
        if (!std::binary_search(computed[i].begin(), computed[i].end(), output->definition()))
          continue;
        if (options_.stage_of && !groups[i].nodes.empty() &&
            options_.stage_of(*nodes_[static_cast<size_t>(groups[i].nodes.front())]) !=
                options_.stage_of(*output->definition()))
          continue;
        std::vector<const Val*> with = extras[i];
        with.push_back(output);
        if (!check(groups[i], with)) continue;
        extras[i] = std::move(with);
        written = true;
      }
      if (written) continue;
      std::vector<const Expr*> chain = {output->definition()};
      for (size_t i = 0; i < chain.size(); ++i) {
        for (const Val* input : chain[i]->inputs()) {
          const Expr* def = input->definition();
          if (def != nullptr && kindOf(def) == Kind::Forwarded &&
              std::find(chain.begin(), chain.end(), def) == chain.end())
            chain.push_back(def);
        }
      }
      const std::vector<const Val*> outputs = {output};
      Segment segment = extractSegment(fusion_, chain, outputs);
      std::optional<std::string> answer = checker_.accepts(segment);
      if (!answer) {
        const std::string reason = checker_.refusalReason(segment);
        BRAZE_THROW() << "segmentFusion: no scheduler accepts the segment that writes fusion "
                      << "output " << output->name() << " (" << describeExpr(*output->definition())
                      << ")" << (reason.empty() ? std::string(".") : ": " + reason) << "\n"
                      << printMath(*segment.fusion);
      }
      segment.scheduler = *answer;
      standalone.push_back(std::move(segment));
    }
  }

  static inline const std::optional<std::string> kRefused = std::nullopt;

  const Fusion& fusion_;
  SegmentChecker& checker_;
  const SegmenterOptions& options_;
  std::vector<Expr*> exprs_;
  std::vector<Kind> kind_;            // per statement id
  std::vector<int32_t> node_of_;      // per statement id: node of a graph Expr, else -1
  std::vector<int32_t> output_rank_;  // per statement id: first position among outputs
  std::vector<uint32_t> stamp_;       // per statement id
  uint32_t stamp_value_ = 0;
  std::vector<const Expr*> nodes_;
  std::vector<const Val*> forwarded_outputs_;
  std::unique_ptr<GroupGraph> graph_;
  std::unordered_map<std::vector<int32_t>, std::optional<std::string>, KeyHash> answers_;
};

}  // namespace

SegmentedFusion segmentFusion(const Fusion& fusion, SegmentChecker& checker,
                              const SegmenterOptions& options) {
  return Segmenter(fusion, checker, options).run();
}

}  // namespace braze
