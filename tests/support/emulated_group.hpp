// A thread group of G lanes (ensemble/thread_group.hpp's interface), for running the GPU's
// warp-tile decomposition of an instance on the CPU: each collective writes the lane's value
// into a slot, meets the other lanes at a barrier, reads, and meets them again. Exact: a test of
// the sliced code's arithmetic, not of the GPU's shuffles, which tests/gpu runs on a device.
//
// The lanes are fibers (ucontext, a stack each) on the calling thread, and take turns: each
// runs from one barrier to its next and hands the thread back, and run_group resumes them in
// order, lanes 0 to G - 1, so a round of turns is one barrier of the group. One core suffices:
// as G std::threads meeting at std::barrier (all G had to be on a core at once),
// SoaSegment.ChainOnThreadGroups* and ChainSlice.* took 29 s alone and 169 s beside one busy
// core; as fibers 49 to 56 s either way (docs/testing.md, "Thread groups on the CPU"). The order of
// turns is fixed, so a run is the same every time, and lanes that meet different numbers of
// barriers (a collective skipped, an ASSERT returning early) stop the test with a message
// where a barrier would hang. Under AddressSanitizer the switches are announced
// (__sanitizer_start_switch_fiber), and ASan says once that it does not fully support
// swapcontext: a warning, not a report.
//
//   run_group<G>([&](int rank) { ... sliced code, EmulatedGroup<G> as the group ... });
#pragma once

#include <sys/mman.h>
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define CHENS_TEST_FIBER_SWITCH_START(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define CHENS_TEST_FIBER_SWITCH_FINISH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define CHENS_TEST_FIBER_SWITCH_START(save, bottom, size) ((void)0)
#define CHENS_TEST_FIBER_SWITCH_FINISH(save, bottom, size) ((void)0)
#endif

namespace chens::test {

struct EmulatedGroupState;
struct EmulatedLane {
  EmulatedGroupState* group = nullptr;
  int rank = 0;
};
inline thread_local EmulatedLane emulated_lane;

struct EmulatedGroupState {
  static constexpr std::size_t scratch_count = 1 << 14;  // 7 (N - 1) doubles for chains up to N = 2340
  // A lane's stack, below it one page that faults (an overflow stops the test). The release
  // build's lanes touched 8 KiB of it (mincore); ASan clears its shadow at each swapcontext.
  static constexpr std::size_t stack_bytes = std::size_t(256) << 10, guard_bytes = 4096;
  struct alignas(16) Slot {
    unsigned char bytes[64];
  };
  struct Lane {
    ucontext_t context{};
    char* mapping = nullptr;
    bool done = false;
    void* fake_stack = nullptr;  // ASan's, while the lane waits
  };

  EmulatedGroupState(int g, void (*invoke)(const void*, int), const void* lane_body)
      : slots(static_cast<std::size_t>(g)),
        scratch(scratch_count),
        lanes(static_cast<std::size_t>(g)),
        call(invoke),
        body(lane_body) {
    for (Lane& lane : lanes) start_lane(lane, &scheduler);
  }
  EmulatedGroupState(const EmulatedGroupState&) = delete;
  EmulatedGroupState& operator=(const EmulatedGroupState&) = delete;
  ~EmulatedGroupState() {
    for (Lane& lane : lanes) munmap(lane.mapping, guard_bytes + stack_bytes);
  }

  // Lanes 0 to G - 1 in turn, each until its next barrier or its end, until all have ended.
  void run() {
    const int size = static_cast<int>(lanes.size());
    for (;;) {
      int done = 0;
      for (int r = 0; r < size; ++r) {
        if (!lanes[static_cast<std::size_t>(r)].done) resume(r);
        done += lanes[static_cast<std::size_t>(r)].done ? 1 : 0;
      }
      if (done == size) return;
      if (done > 0) {
        std::fprintf(stderr,
                     "EmulatedGroup: %d of %d lanes ended while the others wait at a barrier: "
                     "the lanes met different numbers of barriers\n",
                     done, size);
        std::abort();
      }
    }
  }
  // Lane `rank` reached a barrier: the thread goes back to run(), which resumes the next lane.
  void barrier(int rank) {
    Lane& lane = lanes[static_cast<std::size_t>(rank)];
    CHENS_TEST_FIBER_SWITCH_START(&lane.fake_stack, scheduler_stack, scheduler_stack_size);
    swapcontext(&lane.context, &scheduler);
    CHENS_TEST_FIBER_SWITCH_FINISH(lane.fake_stack, nullptr, nullptr);
  }

  std::vector<Slot> slots;
  std::vector<double> scratch;

 private:
  void resume(int rank) {
    emulated_lane = EmulatedLane{this, rank};
    Lane& lane = lanes[static_cast<std::size_t>(rank)];
    CHENS_TEST_FIBER_SWITCH_START(&scheduler_fake_stack, lane.mapping + guard_bytes, stack_bytes);
    swapcontext(&scheduler, &lane.context);
    CHENS_TEST_FIBER_SWITCH_FINISH(scheduler_fake_stack, nullptr, nullptr);
    emulated_lane = EmulatedLane{};
  }
  // getcontext returns twice, like setjmp: kept out of the constructor (-Wclobbered).
  [[gnu::noinline]] static void start_lane(Lane& lane, ucontext_t* link) {
    void* m = mmap(nullptr, guard_bytes + stack_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED || mprotect(m, guard_bytes, PROT_NONE) != 0 || getcontext(&lane.context) != 0) {
      std::fprintf(stderr, "EmulatedGroup: no stack for a lane\n");
      std::abort();
    }
    lane.mapping = static_cast<char*>(m);
    lane.context.uc_stack.ss_sp = lane.mapping + guard_bytes;
    lane.context.uc_stack.ss_size = stack_bytes;
    lane.context.uc_link = link;
    makecontext(&lane.context, &lane_main, 0);
  }
  // A lane's first and only frame: the body, then back to run() (uc_link) for good.
  static void lane_main() {
    EmulatedGroupState& g = *emulated_lane.group;
    const int rank = emulated_lane.rank;
    CHENS_TEST_FIBER_SWITCH_FINISH(nullptr, &g.scheduler_stack, &g.scheduler_stack_size);
    g.call(g.body, rank);
    g.lanes[static_cast<std::size_t>(rank)].done = true;
    CHENS_TEST_FIBER_SWITCH_START(nullptr, g.scheduler_stack, g.scheduler_stack_size);
  }

  std::vector<Lane> lanes;
  ucontext_t scheduler{};
  void (*call)(const void*, int);
  const void* body;
  void* scheduler_fake_stack = nullptr;
  const void* scheduler_stack = nullptr;
  std::size_t scheduler_stack_size = 0;
};

template <int G>
struct EmulatedGroup {
  static constexpr int size = G;
  static int rank() { return emulated_lane.rank; }

  template <class T>
  static T from_next(const T& x) {
    return exchange(x, rank() + 1 < G ? rank() + 1 : rank());
  }
  template <class T>
  static T from_prev(const T& x) {
    return exchange(x, rank() > 0 ? rank() - 1 : rank());
  }
  template <class T>
  static T broadcast(const T& x, int src) {
    return exchange(x, src);
  }
  // The warp tile's butterfly, in the same pairing (the result is exact either way).
  template <class T>
  static T max(T x) {
    for (int off = 1; off < G; off *= 2) {
      const T y = exchange(x, rank() ^ off);
      x = y > x ? y : x;
    }
    return x;
  }
  static bool all(bool b) {
    int v = b ? 1 : 0;
    for (int off = 1; off < G; off *= 2) v &= exchange(v, rank() ^ off);
    return v != 0;
  }
  template <class T, class F>
  static T ordered_fold(T acc, const F& f) {
    for (int r = 0; r < G; ++r) {
      if (rank() == r) acc = f(acc);
      acc = broadcast(acc, r);
    }
    return acc;
  }
  static void sync() { emulated_lane.group->barrier(rank()); }
  template <class T>
  static T* scratch(int count) {
    static_assert(std::is_same_v<T, double>, "the emulated scratch holds doubles");
    auto& s = emulated_lane.group->scratch;
    if (static_cast<std::size_t>(count) > s.size()) std::abort();  // run_group sized it
    return s.data();
  }

 private:
  template <class T>
  static T exchange(const T& x, int src) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(EmulatedGroupState::Slot::bytes));
    EmulatedGroupState& g = *emulated_lane.group;
    std::memcpy(g.slots[static_cast<std::size_t>(rank())].bytes, &x, sizeof(T));
    g.barrier(rank());
    T y;
    std::memcpy(&y, g.slots[static_cast<std::size_t>(src)].bytes, sizeof(T));
    g.barrier(rank());
    return y;
  }
};

// Runs body(rank) on G lanes that form one EmulatedGroup<G>, on the calling thread.
template <int G, class Body>
void run_group(const Body& body) {
  auto call = [](const void* b, int rank) { (*static_cast<const Body*>(b))(rank); };
  EmulatedGroupState state(G, call, &body);
  state.run();
}

}  // namespace chens::test

#undef CHENS_TEST_FIBER_SWITCH_START
#undef CHENS_TEST_FIBER_SWITCH_FINISH
