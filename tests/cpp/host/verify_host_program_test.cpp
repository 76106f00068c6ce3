// verifyHostProgram on programs written by hand: a valid one with a stream loop passes, and
// each rule, broken once, is named.

#include <gtest/gtest.h>

#include "braze/host/host_program.h"
#include "braze/ops/elementwise.h"

namespace braze::host {
namespace {

// A fusion to name values by: T0 [s0, s1] -> T1 = exp(T0).
struct Original {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  Original() { fusion->addOutput(y); }
};

Allocate allocateLike(const TensorView* tv, int32_t buffer) {
  Allocate a;
  a.buffer = buffer;
  a.tensor = tv;
  for (const IterDomain* id : tv->logicalNoReductions()) a.extents.push_back(id->logicalExtent());
  return a;
}

// %s0 = get_current_stream; %0 = allocate; for loop 0: stream, wait, select T0, select %0,
// launch; back to the caller's stream; join; return %0.
HostProgram validLoop(const Original& o) {
  HostProgram program;
  program.original = o.fusion.get();
  program.num_buffers = 3;
  program.num_streams = 1;
  program.extents = {o.x->axis(0)->extent()};
  program.loops.push_back({ValueRef{SlotKind::Extent, 0}, StreamAxis{0, true, 4}, o.y, 4});
  program.instructions.emplace_back(GetCurrentStream{0});
  program.instructions.emplace_back(allocateLike(o.y, 0));
  ForLoop loop;
  loop.loop = 0;
  loop.body.emplace_back(SetCurrentStream{StreamRef{-1, 0, false}});
  loop.body.emplace_back(Synchronize{StreamRef{0, -1, false}});
  loop.body.emplace_back(Select{1, ValueRef{SlotKind::Input, 0}, 0, 0, 0});
  loop.body.emplace_back(Select{2, ValueRef{SlotKind::Buffer, 0}, 0, 0, 0});
  loop.body.emplace_back(LaunchKernel{0, {ValueRef{SlotKind::Buffer, 1}}, {2}});
  program.instructions.emplace_back(std::move(loop));
  program.instructions.emplace_back(SetCurrentStream{StreamRef{0, -1, false}});
  program.instructions.emplace_back(Synchronize{StreamRef{-1, 0, true}});
  program.outputs = {ValueRef{SlotKind::Buffer, 0}};
  return program;
}

ForLoop& loopOf(HostProgram& program) {
  return std::get<ForLoop>(program.instructions[2]);
}

void expectProblem(const HostProgram& program, const std::string& fragment) {
  const std::optional<std::string> problem = verifyHostProgram(program);
  ASSERT_TRUE(problem.has_value()) << "no problem found in:\n" << program.toString();
  EXPECT_NE(problem->find(fragment), std::string::npos) << *problem;
}

TEST(VerifyHostProgramTest, AValidLoopPassesAndPrints) {
  Original o;
  const HostProgram program = validLoop(o);
  EXPECT_EQ(verifyHostProgram(program), std::nullopt);
  EXPECT_EQ(program.toString(),
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[" +
                o.x->axis(0)->extent()->name() + ", " + o.x->axis(1)->extent()->name() +
                "]  (T1)\n"
                "for loop 0 over T1 axis 0 in 4 slices (extent " +
                o.x->axis(0)->extent()->name() +
                ") on 4 streams:\n"
                "  set_current_stream loop 0 stream\n"
                "  synchronize %s0\n"
                "  %1 = select T0 dim 0, slice of loop 0\n"
                "  %2 = select %0 dim 0, slice of loop 0\n"
                "  launch segment 0 (%1) -> (%2)\n"
                "set_current_stream %s0\n"
                "synchronize loop 0 streams\n"
                "return (%0)\n");
}

TEST(VerifyHostProgramTest, TensorSlotsAreDefinedBeforeUseAndFreedOnceAfterIt) {
  Original o;
  {
    HostProgram program = validLoop(o);
    program.instructions.erase(program.instructions.begin() + 1);  // no allocation
    expectProblem(program, "reads %0 before it is allocated or selected");
  }
  {
    HostProgram program = validLoop(o);
    program.outputs = {};
    expectProblem(program, "%0 is allocated and never freed");
  }
  {
    HostProgram program = validLoop(o);
    program.outputs = {};
    program.instructions.insert(program.instructions.begin() + 2, Deallocate{0});
    expectProblem(program, "reads %0 after it is freed");
  }
  {
    HostProgram program = validLoop(o);
    program.instructions.emplace_back(Deallocate{0});
    expectProblem(program, "frees %0, which the program returns");
  }
  {
    HostProgram program = validLoop(o);
    program.instructions.emplace_back(Deallocate{1});
    expectProblem(program, "frees %1, which was never allocated");
  }
  {
    HostProgram program = validLoop(o);
    // A view read after its loop ended.
    program.instructions.emplace_back(LaunchKernel{0, {ValueRef{SlotKind::Buffer, 1}}, {0}});
    expectProblem(program, "reads %1 before it is allocated or selected (or after its loop ended)");
  }
}

TEST(VerifyHostProgramTest, ViewsAndRingsStayWithinTheirBase) {
  Original o;
  {
    HostProgram program = validLoop(o);
    std::get<Select>(loopOf(program).body[2]).axis = 2;
    expectProblem(program, "slices dim 2 of a tensor of rank 2");
  }
  {
    HostProgram program = validLoop(o);
    std::get<Select>(loopOf(program).body[3]).ring_slots = 4;
    expectProblem(program, "as a ring, which it is not");
  }
  {
    HostProgram program = validLoop(o);
    auto& allocate = std::get<Allocate>(program.instructions[1]);
    allocate.ring_slots = 4;
    allocate.ring_loop = 0;
    expectProblem(program, "a ring of another loop or size, as a slice");
  }
  {
    HostProgram program = validLoop(o);
    program.instructions.insert(program.instructions.begin() + 2,
                                Select{1, ValueRef{SlotKind::Input, 0}, 0, 0, 0});
    expectProblem(program, "selects a slice of loop 0 outside that loop");
  }
  {
    HostProgram program = validLoop(o);
    loopOf(program).body.back() = LaunchKernel{0, {ValueRef{SlotKind::Buffer, 1}}, {0}};
    auto& allocate = std::get<Allocate>(program.instructions[1]);
    allocate.ring_slots = 4;
    allocate.ring_loop = 0;
    std::get<Select>(loopOf(program).body[3]).ring_slots = 4;
    expectProblem(program, "writes all of ring %0 instead of a slot of it");
  }
}

TEST(VerifyHostProgramTest, CopiesReadAndWriteDefinedSlots) {
  Original o;
  {
    HostProgram program = validLoop(o);
    loopOf(program).body.insert(loopOf(program).body.begin() + 4,
                                Copy{ValueRef{SlotKind::Buffer, 2}, ValueRef{SlotKind::Buffer, 1}});
    EXPECT_EQ(verifyHostProgram(program), std::nullopt) << program.toString();
    EXPECT_NE(program.toString().find("  copy_to_device %1 -> %2\n"), std::string::npos);
  }
  {
    HostProgram program = validLoop(o);
    loopOf(program).body.insert(loopOf(program).body.begin() + 2,
                                Copy{ValueRef{SlotKind::Buffer, 2}, ValueRef{SlotKind::Input, 0}});
    expectProblem(program, "reads %2 before it is allocated or selected");
  }
  {
    HostProgram program = validLoop(o);
    auto& allocate = std::get<Allocate>(program.instructions[1]);
    allocate.ring_slots = 4;
    allocate.ring_loop = 0;
    std::get<Select>(loopOf(program).body[3]).ring_slots = 4;
    program.instructions.insert(program.instructions.begin() + 2,
                                Copy{ValueRef{SlotKind::Buffer, 0}, ValueRef{SlotKind::Input, 0}});
    expectProblem(program, "copies into all of ring %0 instead of a slot of it");
  }
}

// validLoop with its result copied back slice by slice: %3 = allocate_host, and in the loop
// %4 = select %3 and copy_to_host %2 -> %4; the device buffer %0 is freed after the loop.
HostProgram copiedBack(const Original& o) {
  HostProgram program = validLoop(o);
  program.num_buffers = 5;
  Allocate host = allocateLike(o.y, 3);
  host.host = true;
  program.instructions.insert(program.instructions.begin() + 2, host);
  ForLoop& loop = std::get<ForLoop>(program.instructions[3]);
  loop.body.emplace_back(Select{4, ValueRef{SlotKind::Buffer, 3}, 0, 0, 0});
  loop.body.emplace_back(Copy{ValueRef{SlotKind::Buffer, 4}, ValueRef{SlotKind::Buffer, 2},
                              CopyDirection::DeviceToHost});
  program.instructions.emplace_back(Deallocate{0});
  program.outputs = {ValueRef{SlotKind::Buffer, 3}};
  return program;
}

TEST(VerifyHostProgramTest, ResultsGoBackIntoHostBuffersThatKernelsNeverTouch) {
  Original o;
  {
    const HostProgram program = copiedBack(o);
    EXPECT_EQ(verifyHostProgram(program), std::nullopt) << program.toString();
    EXPECT_NE(program.toString().find("%3 = allocate_host float32["), std::string::npos)
        << program.toString();
    EXPECT_NE(program.toString().find("  copy_to_host %2 -> %4\n"), std::string::npos)
        << program.toString();
  }
  {
    HostProgram program = copiedBack(o);
    std::get<LaunchKernel>(std::get<ForLoop>(program.instructions[3]).body[4]).outputs = {4};
    std::get<ForLoop>(program.instructions[3])
        .body.erase(std::get<ForLoop>(program.instructions[3]).body.begin() + 4);
    std::get<ForLoop>(program.instructions[3])
        .body.emplace_back(LaunchKernel{0, {ValueRef{SlotKind::Buffer, 1}}, {4}});
    expectProblem(program, "writes %4, which is host memory");
  }
  {
    HostProgram program = copiedBack(o);
    std::get<Copy>(std::get<ForLoop>(program.instructions[3]).body.back()) = Copy{
        ValueRef{SlotKind::Buffer, 2}, ValueRef{SlotKind::Buffer, 4}, CopyDirection::DeviceToHost};
    expectProblem(program, "copies to the host into other than a host buffer");
  }
  {
    HostProgram program = copiedBack(o);
    std::get<Copy>(std::get<ForLoop>(program.instructions[3]).body.back()) = Copy{
        ValueRef{SlotKind::Buffer, 2}, ValueRef{SlotKind::Buffer, 4}, CopyDirection::HostToDevice};
    expectProblem(program, "copies to the device from other than a fusion input");
  }
  {
    HostProgram program = copiedBack(o);
    std::get<Allocate>(program.instructions[2]).ring_slots = 4;
    std::get<Allocate>(program.instructions[2]).ring_loop = 0;
    expectProblem(program, "allocates host memory as a ring");
  }
}

TEST(VerifyHostProgramTest, StreamsAreSavedNamedInTheirLoopAndRestored) {
  Original o;
  {
    HostProgram program = validLoop(o);
    program.instructions.erase(program.instructions.begin());  // no get_current_stream
    expectProblem(program, "names stream slot %s0 before get_current_stream saved it");
  }
  {
    HostProgram program = validLoop(o);
    program.instructions.erase(program.instructions.begin() + 3);  // stays on the pool
    expectProblem(program, "the program ends on another stream");
  }
  {
    HostProgram program = validLoop(o);
    program.instructions.insert(program.instructions.begin() + 3, Allocate{allocateLike(o.y, 1)});
    expectProblem(program, "runs on a pool stream of a loop that ended");
  }
  {
    HostProgram program = validLoop(o);
    loopOf(program).body.emplace_back(Synchronize{StreamRef{-1, 0, true}});
    expectProblem(program, "joins the streams of loop 0 inside that loop");
  }
  {
    HostProgram program = validLoop(o);
    program.instructions.emplace_back(SetCurrentStream{StreamRef{-1, 0, false}});
    expectProblem(program, "names the iteration stream of loop 0 outside that loop");
  }
  {
    HostProgram program = validLoop(o);
    loopOf(program).body.emplace_back(Deallocate{0});
    expectProblem(program, "inside a loop");
  }
  {
    HostProgram program = validLoop(o);
    loopOf(program).body.emplace_back(LaunchKernel{0, {ValueRef{SlotKind::SliceLength, 1}}, {2}});
    expectProblem(program, "reads the slice length of loop 1 outside it");
  }
}

}  // namespace
}  // namespace braze::host
