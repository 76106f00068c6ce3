#include "segment/group_graph.h"

#include <algorithm>

#include "braze/error.h"

namespace braze::segment_detail {

namespace {

size_t at(int32_t i) {
  return static_cast<size_t>(i);
}

void addUnique(std::vector<int32_t>& list, int32_t value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

GroupGraph::GroupGraph(int32_t nodes, const std::vector<std::pair<int32_t, int32_t>>& edges)
    : group_of_(at(nodes)),
      members_(at(nodes)),
      successors_(at(nodes)),
      predecessors_(at(nodes)),
      version_(at(nodes), 0),
      order_(at(nodes)),
      position_(at(nodes)),
      forward_mark_(at(nodes), 0),
      backward_mark_(at(nodes), 0) {
  for (int32_t node = 0; node < nodes; ++node) {
    group_of_[at(node)] = node;
    members_[at(node)] = {node};
    order_[at(node)] = node;
    position_[at(node)] = node;
  }
  for (const auto& [producer, consumer] : edges) {
    BRAZE_INTERNAL_CHECK(producer < consumer)
        << "GroupGraph: edge " << producer << " -> " << consumer
        << " goes against the topological order; please report";
    addUnique(successors_[at(producer)], consumer);
    addUnique(predecessors_[at(consumer)], producer);
  }
}

uint32_t GroupGraph::nextMark() {
  if (++mark_ == 0) {
    // Wrapped around: old marks could collide with new ones.
    std::fill(forward_mark_.begin(), forward_mark_.end(), 0);
    std::fill(backward_mark_.begin(), backward_mark_.end(), 0);
    mark_ = 1;
  }
  return mark_;
}

MergePlan GroupGraph::plan(int32_t a, int32_t b) {
  BRAZE_INTERNAL_CHECK(a != b && position(a) >= 0 && position(b) >= 0)
      << "GroupGraph::plan: groups " << a << " and " << b << " are not two live groups";
  const int32_t first = position(a) < position(b) ? a : b;
  const int32_t last = first == a ? b : a;
  const int32_t last_position = position(last);

  // Groups reachable from `first` without passing `last` in the order: nothing later than
  // `last` leads back to it.
  const uint32_t forward = nextMark();
  std::vector<int32_t> reached;
  std::vector<int32_t> stack = {first};
  forward_mark_[at(first)] = forward;
  while (!stack.empty()) {
    const int32_t g = stack.back();
    stack.pop_back();
    for (int32_t s : successors_[at(g)]) {
      if (position(s) > last_position || forward_mark_[at(s)] == forward) continue;
      forward_mark_[at(s)] = forward;
      reached.push_back(s);
      if (s != last) stack.push_back(s);
    }
  }

  MergePlan plan;
  const uint32_t on_path = nextMark();
  backward_mark_[at(first)] = on_path;
  backward_mark_[at(last)] = on_path;
  if (forward_mark_[at(last)] == forward) {
    // Groups on a path first -> ... -> last: reachable from `first` and reaching `last`.
    stack = {last};
    while (!stack.empty()) {
      const int32_t g = stack.back();
      stack.pop_back();
      for (int32_t p : predecessors_[at(g)]) {
        if (forward_mark_[at(p)] != forward || backward_mark_[at(p)] == on_path) continue;
        backward_mark_[at(p)] = on_path;
        plan.groups.push_back(p);
        stack.push_back(p);
      }
    }
  }
  plan.groups.push_back(first);
  plan.groups.push_back(last);
  for (int32_t g : reached) {
    if (backward_mark_[at(g)] != on_path) plan.descendants.push_back(g);
  }
  const auto by_position = [this](int32_t x, int32_t y) { return position(x) < position(y); };
  std::sort(plan.groups.begin(), plan.groups.end(), by_position);
  std::sort(plan.descendants.begin(), plan.descendants.end(), by_position);
  return plan;
}

int32_t GroupGraph::merge(const MergePlan& plan) {
  const std::vector<int32_t>& groups = plan.groups;
  int32_t target = groups.front();
  for (int32_t g : groups) {
    if (members_[at(g)].size() > members_[at(target)].size()) target = g;
  }
  const uint32_t in_set = nextMark();
  for (int32_t g : groups) backward_mark_[at(g)] = in_set;

  // The merged group's neighbours, each once. No group is both (that would be a cycle through
  // the merged set, which a plan never contains).
  std::vector<int32_t> merged_successors;
  std::vector<int32_t> merged_predecessors;
  const uint32_t seen = nextMark();
  for (int32_t g : groups) {
    for (int32_t s : successors_[at(g)]) {
      if (backward_mark_[at(s)] == in_set || forward_mark_[at(s)] == seen) continue;
      forward_mark_[at(s)] = seen;
      merged_successors.push_back(s);
    }
    for (int32_t p : predecessors_[at(g)]) {
      if (backward_mark_[at(p)] == in_set || forward_mark_[at(p)] == seen) continue;
      forward_mark_[at(p)] = seen;
      merged_predecessors.push_back(p);
    }
  }
  const auto redirect = [&](std::vector<int32_t>& list) {
    std::erase_if(list, [&](int32_t g) { return backward_mark_[at(g)] == in_set; });
    list.push_back(target);
  };
  for (int32_t s : merged_successors) redirect(predecessors_[at(s)]);
  for (int32_t p : merged_predecessors) redirect(successors_[at(p)]);

  std::vector<int32_t> members;
  for (int32_t g : groups) {
    members.insert(members.end(), members_[at(g)].begin(), members_[at(g)].end());
    if (g == target) continue;
    for (int32_t node : members_[at(g)]) group_of_[at(node)] = target;
  }
  std::sort(members.begin(), members.end());

  // The window between the first and last merged group: the groups that neither join nor
  // descend from the first keep their place before the merged group; the descendants follow it.
  const int32_t begin = position(groups.front());
  const int32_t end = position(groups.back()) + 1;
  const uint32_t descendant = nextMark();
  for (int32_t g : plan.descendants) forward_mark_[at(g)] = descendant;
  std::vector<int32_t> window;
  for (int32_t p = begin; p < end; ++p) {
    const int32_t g = order_[at(p)];
    if (g >= 0 && backward_mark_[at(g)] != in_set && forward_mark_[at(g)] != descendant)
      window.push_back(g);
  }
  window.push_back(target);
  window.insert(window.end(), plan.descendants.begin(), plan.descendants.end());
  window.resize(at(end - begin), -1);
  for (int32_t p = begin; p < end; ++p) {
    const int32_t g = window[at(p - begin)];
    order_[at(p)] = g;
    if (g >= 0) position_[at(g)] = p;
  }

  for (int32_t g : groups) {
    if (g == target) continue;
    members_[at(g)].clear();
    successors_[at(g)].clear();
    predecessors_[at(g)].clear();
    position_[at(g)] = -1;
  }
  members_[at(target)] = std::move(members);
  successors_[at(target)] = std::move(merged_successors);
  predecessors_[at(target)] = std::move(merged_predecessors);
  ++version_[at(target)];
  return target;
}

std::vector<int32_t> GroupGraph::groupsInOrder() const {
  std::vector<int32_t> groups;
  for (int32_t g : order_) {
    if (g >= 0) groups.push_back(g);
  }
  return groups;
}

}  // namespace braze::segment_detail
