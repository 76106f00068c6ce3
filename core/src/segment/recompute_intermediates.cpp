// recomputeIntermediates: a segment computes again, from what it can read, an intermediate
// that another segment would write for it, when that moves fewer bytes.
//
// A layer norm backward whose rows are too long for one kernel to hold the column partials:
//
//   segment 0 (inner_outer)  xhat = (float(x) - mean) * rstd; dx = ...(dy, xhat, w)
//                            reads dy, x, mean, rstd, w; writes dx, xhat (float32 [rows, n])
//   segment 1 (reduction)    dw = sum_rows(dy * xhat), db = sum_rows(dy)
//                            reads dy, xhat
// becomes
//   segment 0                writes dx only
//   segment 1                xhat = (float(x) - mean) * rstd; dw = ..., db = ...
//                            reads dy, x (bfloat16: 2 bytes an element), mean, rstd ([rows])
//
// The xhat round trip cost 8 bytes an element; x costs 2. Walking back from the tensor stops at
// what the reader can read without anyone writing more: fusion inputs (through forwarded
// chains), tensors some segment writes anyway, tensors the reader computes itself.
//
// State per group: its nodes (its own and the ones it recomputes) and what it reads from
// memory; per tensor, how many groups read it from memory (a node's tensor is written while
// that is positive or it is an original output). A recomputation changes the reader's nodes;
// the tensors nobody reads any more make their owners drop them and the nodes only they
// needed, which releases those nodes' reads in turn. Each recomputation is a transaction:
// undone when the checker refuses any group it changed.

#include "segment/recompute_intermediates.h"

#include <algorithm>

#include "segment/forwarded_exprs.h"

namespace braze::segment_detail {

namespace {

bool byId(const Val* a, const Val* b) {
  return a->id() < b->id();
}

class Recomputer {
 public:
  Recomputer(RecomputeGraph& graph, const std::vector<std::vector<int32_t>>& groups)
      : graph_(graph),
        nodes_(graph.nodes()),
        owner_(nodes_.size(), -1),
        saved_in_(groups.size(), 0) {
    const size_t statements =
        nodes_.empty() ? 0 : static_cast<size_t>(nodes_.front()->fusion().numStatements());
    readers_.assign(statements, 0);
    stamp_.assign(statements, 0);
    groups_.resize(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      groups_[g].nodes = groups[g];
      for (int32_t node : groups[g]) owner_[at(node)] = static_cast<int32_t>(g);
    }
    for (Group& group : groups_) {
      group.reads = readsOf(group);
      for (const TensorView* tv : group.reads) {
        if (isNodeOutput(*tv)) ++readers_[at(*tv)];
      }
    }
  }

  std::vector<RecomputedGroup> run() {
    for (int round = 0; round < kMaxRecomputeRounds; ++round) {
      bool changed = false;
      for (size_t g = 0; g < groups_.size(); ++g) {
        const auto group = static_cast<int32_t>(g);
        const std::vector<const TensorView*> list = candidates(group);
        if (list.empty()) continue;
        // All at once first: one question per changed group instead of one per intermediate
        // (a segment of many column sums recomputing every layer's xhat).
        const Outcome all = recomputeAll(group, list);
        if (all == Outcome::Kept) changed = true;
        if (all != Outcome::Refused) continue;
        for (const TensorView* tv : list) changed = recomputeOne(group, *tv) || changed;
      }
      if (!changed) break;
    }
    std::vector<RecomputedGroup> result;
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].nodes.empty()) continue;
      result.push_back({groups_[g].nodes, outputsOf(static_cast<int32_t>(g)), groups_[g].changed});
    }
    return result;
  }

 private:
  struct Group {
    std::vector<int32_t> nodes;            // ascending
    std::vector<const TensorView*> reads;  // by id: what it reads from memory
    bool changed = false;
  };

  // The Exprs a recomputation copies and the tensors they make the reader read.
  struct Chain {
    std::vector<int32_t> nodes;
    std::vector<const TensorView*> sources;  // by id, each once
  };

  static size_t at(int32_t i) { return static_cast<size_t>(i); }
  static size_t at(const Val& val) { return static_cast<size_t>(val.id()); }

  uint32_t nextStamp() {
    if (++stamp_value_ == 0) {
      std::fill(stamp_.begin(), stamp_.end(), 0);
      stamp_value_ = 1;
    }
    return stamp_value_;
  }

  int32_t nodeOfTensor(const TensorView& tv) const {
    const Expr* def = tv.definition();
    return def == nullptr ? -1 : graph_.nodeOf(*def);
  }
  bool isNodeOutput(const TensorView& tv) const { return nodeOfTensor(tv) >= 0; }

  bool written(const TensorView& tv) const {
    return graph_.isOriginalOutput(tv) || readers_[at(tv)] > 0;
  }

  static bool contains(const Group& group, int32_t node) {
    return std::binary_search(group.nodes.begin(), group.nodes.end(), node);
  }

  bool reads(int32_t g, const TensorView& tv) const {
    const std::vector<const TensorView*>& list = groups_[at(g)].reads;
    return std::binary_search(list.begin(), list.end(), &tv, byId);
  }

  // What the group's nodes read from memory: fusion inputs (those forwarded chains start from
  // included) and tensors of nodes outside the group.
  std::vector<const TensorView*> readsOf(const Group& group) {
    const uint32_t stamp = nextStamp();
    std::vector<const TensorView*> list;
    for (int32_t node : group.nodes) {
      for (const Val* input : nodes_[at(node)]->inputs()) {
        const auto* tv = input->dynCast<TensorView>();
        if (tv == nullptr) continue;
        const TensorView* read = tv;
        if (const Expr* def = tv->definition()) {
          const int32_t producer = graph_.nodeOf(*def);
          if (producer < 0) {
            read = graph_.memorySource(*tv);
          } else if (contains(group, producer)) {
            read = nullptr;
          }
        }
        if (read == nullptr || stamp_[at(*read)] == stamp) continue;
        stamp_[at(*read)] = stamp;
        list.push_back(read);
      }
    }
    std::sort(list.begin(), list.end(), byId);
    return list;
  }

  // The tensors of the group's own nodes that are written.
  std::vector<const Val*> outputsOf(int32_t g) const {
    std::vector<const Val*> outputs;
    for (int32_t node : groups_[at(g)].nodes) {
      if (owner_[at(node)] != g) continue;
      for (const Val* output : nodes_[at(node)]->outputs()) {
        const auto* tv = output->dynCast<TensorView>();
        if (tv != nullptr && written(*tv)) outputs.push_back(tv);
      }
    }
    std::sort(outputs.begin(), outputs.end(), byId);
    return outputs;
  }

  // Intermediates the group reads, the largest first.
  std::vector<const TensorView*> candidates(int32_t g) const {
    std::vector<const TensorView*> list;
    for (const TensorView* tv : groups_[at(g)].reads) {
      if (isNodeOutput(*tv)) list.push_back(tv);
    }
    std::stable_sort(list.begin(), list.end(), [this](const TensorView* a, const TensorView* b) {
      return graph_.bytesOf(*a) > graph_.bytesOf(*b);
    });
    return list;
  }

  // The cheap Exprs computing `tv` from what group `g` can read; false when one on the way is
  // not cheap or there are too many.
  bool walk(int32_t g, const TensorView& tv, Chain& chain) {
    const Group& group = groups_[at(g)];
    const uint32_t stamp = nextStamp();
    stamp_[at(tv)] = stamp;
    std::vector<const TensorView*> stack = {&tv};
    while (!stack.empty()) {
      const TensorView* current = stack.back();
      stack.pop_back();
      const Expr* def = current->definition();
      if (def == nullptr) {
        chain.sources.push_back(current);
        continue;
      }
      const int32_t node = graph_.nodeOf(*def);
      if (node < 0) {
        if (const TensorView* source = graph_.memorySource(*current))
          chain.sources.push_back(source);
        continue;
      }
      if (contains(group, node)) continue;
      if (current != &tv && written(*current)) {
        chain.sources.push_back(current);
        continue;
      }
      if (!isCheapToRecompute(def->op()) ||
          static_cast<int64_t>(chain.nodes.size()) >= kMaxRecomputedExprs)
        return false;
      chain.nodes.push_back(node);
      for (const Val* input : def->inputs()) {
        const auto* in = input->dynCast<TensorView>();
        if (in == nullptr || stamp_[at(*in)] == stamp) continue;
        stamp_[at(*in)] = stamp;
        stack.push_back(in);
      }
    }
    std::sort(chain.sources.begin(), chain.sources.end(), byId);
    chain.sources.erase(std::unique(chain.sources.begin(), chain.sources.end()),
                        chain.sources.end());
    return true;
  }

  // Whether recomputing `tv` in group `g` is possible (`chain`: how) and moves fewer bytes:
  // the sources `g` does not read yet against `tv`'s read, and its write when `g` is its last
  // reader.
  bool worthRecomputing(int32_t g, const TensorView& tv, Chain& chain) {
    // An earlier recomputation in this group may have brought it along.
    if (!reads(g, tv) || !walk(g, tv, chain)) return false;
    double new_bytes = 0;
    for (const TensorView* source : chain.sources) {
      if (!reads(g, *source)) new_bytes += graph_.bytesOf(*source);
    }
    const bool last_reader = readers_[at(tv)] == 1 && !graph_.isOriginalOutput(tv);
    return new_bytes < graph_.bytesOf(tv) * (last_reader ? 2.0 : 1.0);
  }

  enum class Outcome { Nothing, Kept, Refused };

  // Every intermediate of `list` worth recomputing in group `g`, kept when the checker accepts
  // all the groups that changed; else nothing changes.
  Outcome recomputeAll(int32_t g, const std::vector<const TensorView*>& list) {
    begin();
    int64_t recomputed = 0;
    for (const TensorView* tv : list) {
      Chain chain;
      if (!worthRecomputing(g, *tv, chain)) continue;
      apply(g, chain);
      ++recomputed;
    }
    if (recomputed == 0) return Outcome::Nothing;
    return finish() ? Outcome::Kept : Outcome::Refused;
  }

  bool recomputeOne(int32_t g, const TensorView& tv) {
    Chain chain;
    if (!worthRecomputing(g, tv, chain)) return false;
    begin();
    apply(g, chain);
    return finish();
  }

  // Group `g` takes the chain's nodes; groups whose tensors no one reads any more drop them.
  void apply(int32_t g, const Chain& chain) {
    Group& group = touch(g);
    group.nodes.insert(group.nodes.end(), chain.nodes.begin(), chain.nodes.end());
    std::sort(group.nodes.begin(), group.nodes.end());
    group.changed = true;
    updateReads(g);
    while (!dirty_.empty()) {
      const int32_t owner = dirty_.back();
      dirty_.pop_back();
      prune(owner);
    }
  }

  // Keeps the transaction's changes when the checker accepts every group it changed (the
  // reader first: it was touched first and is the one most likely refused); else undoes them.
  bool finish() {
    for (size_t i = 0; i < saved_groups_.size(); ++i) {
      const int32_t changed = saved_groups_[i].first;
      const Group& now = groups_[at(changed)];
      if (!now.nodes.empty() && !graph_.accepts(now.nodes, outputsOf(changed))) {
        rollback();
        return false;
      }
    }
    commit();
    return true;
  }

  // Recounts what group `g` reads (already touched) after its nodes changed; queues the owners
  // of tensors no group reads any more.
  void updateReads(int32_t g) {
    Group& group = groups_[at(g)];
    std::vector<const TensorView*> now = readsOf(group);
    std::vector<const TensorView*> gone;
    std::vector<const TensorView*> added;
    std::set_difference(group.reads.begin(), group.reads.end(), now.begin(), now.end(),
                        std::back_inserter(gone), byId);
    std::set_difference(now.begin(), now.end(), group.reads.begin(), group.reads.end(),
                        std::back_inserter(added), byId);
    group.reads = std::move(now);
    for (const TensorView* tv : added) {
      if (isNodeOutput(*tv)) addReaders(*tv, 1);
    }
    for (const TensorView* tv : gone) {
      if (!isNodeOutput(*tv)) continue;
      addReaders(*tv, -1);
      const int32_t owner = owner_[at(nodeOfTensor(*tv))];
      if (!written(*tv) && owner >= 0) dirty_.push_back(owner);
    }
  }

  // Drops from group `o` the nodes nothing needs any more: their tensors are neither written
  // (for its own nodes) nor read by a node it keeps. Its own dropped nodes belong to no group
  // from then on.
  void prune(int32_t o) {
    Group& group = touch(o);
    group.changed = true;
    const uint32_t needed = nextStamp();
    std::vector<int32_t> live;
    for (auto it = group.nodes.rbegin(); it != group.nodes.rend(); ++it) {
      const int32_t node = *it;
      const Expr* expr = nodes_[at(node)];
      const bool own = owner_[at(node)] == o;
      const bool is_live =
          std::any_of(expr->outputs().begin(), expr->outputs().end(), [&](const Val* output) {
            const auto* tv = output->dynCast<TensorView>();
            return stamp_[at(*output)] == needed || (own && tv != nullptr && written(*tv));
          });
      if (!is_live) {
        if (own) setOwner(node, -1);
        continue;
      }
      live.push_back(node);
      for (const Val* input : expr->inputs()) stamp_[at(*input)] = needed;
    }
    std::reverse(live.begin(), live.end());
    group.nodes = std::move(live);
    updateReads(o);
  }

  // Transactions: every change to a group, a reader count or an owner is logged and undone
  // together when the checker refuses.
  void begin() {
    if (++transaction_ == 0) {
      std::fill(saved_in_.begin(), saved_in_.end(), 0);
      transaction_ = 1;
    }
  }

  Group& touch(int32_t g) {
    if (saved_in_[at(g)] != transaction_) {
      saved_in_[at(g)] = transaction_;
      saved_groups_.emplace_back(g, groups_[at(g)]);
    }
    return groups_[at(g)];
  }

  void addReaders(const TensorView& tv, int32_t delta) {
    saved_readers_.emplace_back(at(tv), readers_[at(tv)]);
    readers_[at(tv)] += delta;
  }

  void setOwner(int32_t node, int32_t owner) {
    saved_owners_.emplace_back(node, owner_[at(node)]);
    owner_[at(node)] = owner;
  }

  void rollback() {
    for (auto it = saved_readers_.rbegin(); it != saved_readers_.rend(); ++it)
      readers_[it->first] = it->second;
    for (auto it = saved_owners_.rbegin(); it != saved_owners_.rend(); ++it)
      owner_[at(it->first)] = it->second;
    for (auto& [g, before] : saved_groups_) groups_[at(g)] = std::move(before);
    commit();
  }

  void commit() {
    saved_groups_.clear();
    saved_readers_.clear();
    saved_owners_.clear();
  }

  RecomputeGraph& graph_;
  const std::vector<const Expr*>& nodes_;
  std::vector<Group> groups_;
  std::vector<int32_t> owner_;    // per node: the group it is its own of, or -1
  std::vector<int32_t> readers_;  // per statement id: groups reading the tensor from memory
  std::vector<uint32_t> stamp_;   // per statement id
  uint32_t stamp_value_ = 0;
  std::vector<int32_t> dirty_;  // groups to prune
  uint32_t transaction_ = 0;
  std::vector<uint32_t> saved_in_;  // per group: the transaction that saved it last
  std::vector<std::pair<int32_t, Group>> saved_groups_;
  std::vector<std::pair<size_t, int32_t>> saved_readers_;
  std::vector<std::pair<int32_t, int32_t>> saved_owners_;
};

}  // namespace

std::vector<RecomputedGroup> recomputeIntermediates(
    RecomputeGraph& graph, const std::vector<std::vector<int32_t>>& groups) {
  return Recomputer(graph, groups).run();
}

}  // namespace braze::segment_detail
