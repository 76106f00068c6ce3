// verifyHostProgram: the rules every host program keeps, checked on every program built.

#include <algorithm>
#include <set>
#include <sstream>

#include "braze/host/host_program.h"

namespace braze::host {
namespace {

class Verifier {
 public:
  explicit Verifier(const HostProgram& program)
      : program_(program), slots_(static_cast<size_t>(std::max(program.num_buffers, 0))) {}

  std::optional<std::string> run() {
    for (const Instruction& instruction : program_.instructions) {
      if (!visit(instruction)) return problem_;
    }
    if (!on_caller_) return "the program ends on another stream than the one it was called on";
    for (size_t b = 0; b < slots_.size(); ++b) {
      const Slot& slot = slots_[b];
      if (slot.state == State::Allocated && slot.owns && !isReturned(b))
        return "%" + std::to_string(b) + " is allocated and never freed";
    }
    for (const ValueRef& output : program_.outputs) {
      if (!usable(output, "the program's result")) return problem_;
    }
    return std::nullopt;
  }

 private:
  enum class State : uint8_t { Undefined, Allocated, View, Freed };
  struct Slot {
    State state = State::Undefined;
    bool owns = false;  // allocated from the pool (not an input's memory, not a view)
    int64_t rank = 0;
    int32_t ring_loop = -1;
    int32_t ring_slots = 0;
    int32_t view_loop = -1;
    int32_t communicating = -1;  // the segment whose Communicate writes it, until its Wait
    bool host = false;           // host memory (Allocate::host, or a view of such a buffer)
    bool of_input = false;       // a view of a fusion input
  };

  static std::string name(const ValueRef& value) { return "%" + std::to_string(value.index); }

  // Whether `value` is host memory the program allocated (or a view of it).
  bool isHostBuffer(const ValueRef& value) const {
    return value.kind == SlotKind::Buffer && slots_[static_cast<size_t>(value.index)].host;
  }

  bool fail(const std::string& what) {
    problem_ = what;
    return false;
  }

  bool isReturned(size_t buffer) const {
    return std::any_of(program_.outputs.begin(), program_.outputs.end(), [&](const ValueRef& r) {
      return r.kind == SlotKind::Buffer && static_cast<size_t>(r.index) == buffer;
    });
  }

  bool inLoop(int32_t loop) const {
    return std::find(open_loops_.begin(), open_loops_.end(), loop) != open_loops_.end();
  }

  Slot* slot(int32_t buffer, const std::string& where) {
    if (buffer < 0 || static_cast<size_t>(buffer) >= slots_.size()) {
      fail(where + " names tensor slot %" + std::to_string(buffer) + ", out of range");
      return nullptr;
    }
    return &slots_[static_cast<size_t>(buffer)];
  }

  // Whether `value` may be read here; its rank in `rank`.
  bool usable(const ValueRef& value, const std::string& where, int64_t* rank = nullptr) {
    switch (value.kind) {
      case SlotKind::Input: {
        const auto& inputs = program_.original->inputs();
        if (value.index < 0 || static_cast<size_t>(value.index) >= inputs.size())
          return fail(where + " reads fusion input " + std::to_string(value.index) +
                      ", out of range");
        if (rank != nullptr) {
          const auto* tv = inputs[static_cast<size_t>(value.index)]->dynCast<TensorView>();
          *rank = tv ? tv->rank() : 0;
        }
        return true;
      }
      case SlotKind::Buffer: {
        Slot* s = slot(value.index, where);
        if (s == nullptr) return false;
        const std::string name = "%" + std::to_string(value.index);
        if (s->state == State::Undefined)
          return fail(where + " reads " + name + " before it is allocated or selected" +
                      (s->view_loop >= 0 ? " (or after its loop ended)" : ""));
        if (s->state == State::Freed) return fail(where + " reads " + name + " after it is freed");
        if (s->communicating >= 0)
          return fail(where + " reads " + name + " before waiting for segment " +
                      std::to_string(s->communicating) + ", which communicates it");
        if (rank != nullptr) *rank = s->rank;
        return true;
      }
      case SlotKind::Extent:
        if (value.index < 0 || static_cast<size_t>(value.index) >= program_.extents.size())
          return fail(where + " reads extent slot " + std::to_string(value.index) +
                      ", out of range");
        return true;
      case SlotKind::SliceLength:
        if (!inLoop(value.index))
          return fail(where + " reads the slice length of loop " + std::to_string(value.index) +
                      " outside it");
        return true;
    }
    return fail(where + " reads a value of unknown kind");
  }

  bool streamUsable(const StreamRef& stream, const std::string& where) {
    if (stream.saved >= 0) {
      if (saved_streams_.count(stream.saved) == 0)
        return fail(where + " names stream slot %s" + std::to_string(stream.saved) +
                    " before get_current_stream saved it");
      return true;
    }
    if (stream.loop < 0 || static_cast<size_t>(stream.loop) >= program_.loops.size())
      return fail(where + " names the streams of loop " + std::to_string(stream.loop) +
                  ", which does not exist");
    if (stream.every && inLoop(stream.loop))
      return fail(where + " joins the streams of loop " + std::to_string(stream.loop) +
                  " inside that loop");
    if (!stream.every && !inLoop(stream.loop))
      return fail(where + " names the iteration stream of loop " + std::to_string(stream.loop) +
                  " outside that loop");
    return true;
  }

  bool visit(const Instruction& instruction) {
    const std::string where = "instruction " + std::to_string(count_++);
    // Outside loops, work runs on the caller's stream: a loop's iterations switch streams, so
    // the caller's is made current again before anything else is enqueued.
    const bool switches_streams = std::holds_alternative<SetCurrentStream>(instruction) ||
                                  std::holds_alternative<Synchronize>(instruction);
    if (open_loops_.empty() && !on_caller_ && !switches_streams)
      return fail(where +
                  " runs on a pool stream of a loop that ended; set_current_stream back "
                  "to the caller's stream after the loop");
    return std::visit(
        Overloaded{
            [&](const Allocate& a) {
              Slot* s = slot(a.buffer, where + " (allocate)");
              if (s == nullptr) return false;
              if (s->state != State::Undefined)
                return fail(where + " allocates %" + std::to_string(a.buffer) +
                            ", which is defined already");
              if (a.ring_slots > 0 &&
                  (a.ring_loop < 0 || static_cast<size_t>(a.ring_loop) >= program_.loops.size() ||
                   a.ring_axis < 0 || a.ring_axis >= static_cast<int64_t>(a.extents.size())))
                return fail(where + " allocates a ring with no loop or an axis out of range");
              if (a.host && (a.ring_slots > 0 || a.alias_input >= 0))
                return fail(where + " allocates host memory as a ring or an input's memory");
              s->host = a.host;
              s->state = State::Allocated;
              s->owns = a.alias_input < 0;
              s->rank = static_cast<int64_t>(a.extents.size());
              s->ring_loop = a.ring_slots > 0 ? a.ring_loop : -1;
              s->ring_slots = a.ring_slots;
              return true;
            },
            [&](const Deallocate& d) {
              Slot* s = slot(d.buffer, where + " (deallocate)");
              if (s == nullptr) return false;
              const std::string name = "%" + std::to_string(d.buffer);
              if (s->state != State::Allocated || !s->owns)
                return fail(where + " frees " + name + ", which " +
                            (s->state == State::Freed                   ? "is freed already"
                             : s->state == State::View                  ? "is a view"
                             : !s->owns && s->state == State::Allocated ? "is an input's memory"
                                                                        : "was never allocated"));
              if (!open_loops_.empty())
                return fail(where + " frees " + name +
                            " inside a loop, before other iterations are done with it");
              if (isReturned(static_cast<size_t>(d.buffer)))
                return fail(where + " frees " + name + ", which the program returns");
              s->state = State::Freed;
              return true;
            },
            [&](const LaunchKernel& l) {
              const std::string what =
                  where + " (launch segment " + std::to_string(l.segment) + ")";
              for (const ValueRef& input : l.inputs) {
                if (!usable(input, what)) return false;
                if (isHostBuffer(input))
                  return fail(what + " reads %" + std::to_string(input.index) +
                              ", which is host memory");
              }
              for (int32_t output : l.outputs) {
                if (!usable({SlotKind::Buffer, output}, what)) return false;
                if (isHostBuffer({SlotKind::Buffer, output}))
                  return fail(what + " writes %" + std::to_string(output) +
                              ", which is host memory");
                const Slot& s = slots_[static_cast<size_t>(output)];
                if (s.ring_loop >= 0)
                  return fail(what + " writes all of ring %" + std::to_string(output) +
                              " instead of a slot of it");
              }
              return true;
            },
            [&](const Select& s) {
              const std::string what = where + " (select)";
              if (!inLoop(s.loop))
                return fail(what + " selects a slice of loop " + std::to_string(s.loop) +
                            " outside that loop");
              int64_t rank = 0;
              if (!usable(s.source, what, &rank)) return false;
              if (s.axis < 0 || s.axis >= rank)
                return fail(what + " slices dim " + std::to_string(s.axis) +
                            " of a tensor of rank " + std::to_string(rank));
              if (s.source.kind == SlotKind::Buffer) {
                const Slot& base = slots_[static_cast<size_t>(s.source.index)];
                if ((base.ring_loop >= 0) != (s.ring_slots > 0) ||
                    (base.ring_loop >= 0 &&
                     (base.ring_loop != s.loop || base.ring_slots != s.ring_slots)))
                  return fail(what + " selects from %" + std::to_string(s.source.index) +
                              (base.ring_loop >= 0 ? ", a ring of another loop or size, as a slice"
                                                   : " as a ring, which it is not"));
              } else if (s.ring_slots > 0) {
                return fail(what + " selects a ring slot of a value that is no ring");
              }
              Slot* view = slot(s.view, what);
              if (view == nullptr) return false;
              if (view->state != State::Undefined || view->view_loop >= 0)
                return fail(what + " defines %" + std::to_string(s.view) +
                            ", which is defined "
                            "already");
              view->state = State::View;
              view->rank = rank;
              view->view_loop = s.loop;
              view->host = isHostBuffer(s.source);
              view->of_input = s.source.kind == SlotKind::Input;
              return true;
            },
            [&](const Copy& c) {
              const std::string what = where + " (copy)";
              if (!usable(c.source, what) || !usable(c.target, what)) return false;
              if (c.target.kind != SlotKind::Buffer && c.target.kind != SlotKind::Input)
                return fail(what + " copies into a scalar");
              if (c.target.kind == SlotKind::Buffer &&
                  slots_[static_cast<size_t>(c.target.index)].ring_loop >= 0)
                return fail(what + " copies into all of ring " + name(c.target) +
                            " instead of a slot of it");
              auto ofInput = [&](const ValueRef& value) {
                return value.kind == SlotKind::Input ||
                       (value.kind == SlotKind::Buffer &&
                        slots_[static_cast<size_t>(value.index)].of_input);
              };
              const bool into_host = isHostBuffer(c.target);
              switch (c.direction) {
                case CopyDirection::HostToDevice:
                  if (!ofInput(c.source) || into_host || ofInput(c.target))
                    return fail(what +
                                " copies to the device from other than a fusion input, "
                                "or into host memory");
                  break;
                case CopyDirection::DeviceToHost:
                  if (!(into_host || ofInput(c.target)) || isHostBuffer(c.source) ||
                      ofInput(c.source))
                    return fail(what +
                                " copies to the host into other than a host buffer or "
                                "input, or from other than device memory the program "
                                "wrote");
                  break;
                case CopyDirection::DeviceToDevice:
                  if (into_host || isHostBuffer(c.source) || ofInput(c.target))
                    return fail(what + " copies between device tensors from or into host memory");
                  break;
              }
              return true;
            },
            [&](const GetCurrentStream& g) {
              if (g.stream < 0 || g.stream >= program_.num_streams)
                return fail(where + " saves stream slot %s" + std::to_string(g.stream) +
                            ", out of range");
              if (!on_caller_)
                return fail(where + " saves the current stream while it is a pool stream");
              saved_streams_.insert(g.stream);
              return true;
            },
            [&](const SetCurrentStream& s) {
              if (!streamUsable(s.stream, where + " (set_current_stream)")) return false;
              on_caller_ = s.stream.saved >= 0;
              return true;
            },
            [&](const Synchronize& s) { return streamUsable(s.stream, where + " (synchronize)"); },
            [&](const Communicate& c) {
              const std::string what =
                  where + " (communicate segment " + std::to_string(c.segment) + ")";
              if (!usable(c.input, what) || !usable({SlotKind::Buffer, c.output}, what))
                return false;
              if (!communicating_.insert(c.segment).second)
                return fail(what + " communicates segment " + std::to_string(c.segment) +
                            " a second time");
              if (slots_[static_cast<size_t>(c.output)].ring_loop >= 0)
                return fail(what + " writes all of ring %" + std::to_string(c.output) +
                            " instead of a slot of it");
              slots_[static_cast<size_t>(c.output)].communicating = c.segment;
              return true;
            },
            [&](const Wait& w) {
              for (Slot& s : slots_) {
                if (s.communicating != w.segment) continue;
                s.communicating = -1;
                return true;
              }
              return fail(where + " waits for segment " + std::to_string(w.segment) +
                          ", which no communicate before it is writing");
            },
            [&](const ForLoop& f) {
              if (f.loop < 0 || static_cast<size_t>(f.loop) >= program_.loops.size() ||
                  inLoop(f.loop))
                return fail(where + " runs loop " + std::to_string(f.loop) +
                            ", which does not exist or is running already");
              if (!usable(program_.loops[static_cast<size_t>(f.loop)].extent, where + " (loop)"))
                return false;
              open_loops_.push_back(f.loop);
              for (const Instruction& inner : f.body) {
                if (!visit(inner)) return false;
              }
              open_loops_.pop_back();
              for (size_t b = 0; b < slots_.size(); ++b) {
                Slot& s = slots_[b];
                if (s.view_loop != f.loop || s.state != State::View) continue;
                if (s.communicating >= 0)
                  return fail(where + " ends an iteration before waiting for segment " +
                              std::to_string(s.communicating) + ", which writes %" +
                              std::to_string(b));
                s.state = State::Undefined;
              }
              return true;
            },
        },
        instruction);
  }

  const HostProgram& program_;
  std::vector<Slot> slots_;
  std::vector<int32_t> open_loops_;
  std::set<int32_t> saved_streams_;
  std::set<int32_t> communicating_;  // segments communicated so far
  bool on_caller_ = true;
  int count_ = 0;
  std::string problem_;
};

}  // namespace

std::optional<std::string> verifyHostProgram(const HostProgram& program) {
  if (program.original == nullptr) return "the program names no original fusion";
  return Verifier(program).run();
}

}  // namespace braze::host
