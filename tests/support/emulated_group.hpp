// A thread group of G host threads (ensemble/thread_group.hpp's interface), for running the
// GPU's warp-tile decomposition of an instance on the CPU: every lane is a std::thread, each
// collective writes the lane's value into a slot, meets the others at a barrier, reads, and
// meets them again. Slow (two barriers per exchange) and exact: a test of the sliced code's
// arithmetic, not of the GPU's shuffles, which tests/gpu runs on a device.
//
//   run_group<G>([&](int rank) { ... sliced code, EmulatedGroup<G> as the group ... });
#pragma once

#include <barrier>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

namespace chens::test {

struct EmulatedGroupState {
  explicit EmulatedGroupState(int g) : barrier(g), slots(static_cast<std::size_t>(g)), scratch(scratch_count) {}
  static constexpr std::size_t scratch_count = 1 << 14;  // 7 (N - 1) doubles for chains up to N = 2340
  std::barrier<> barrier;
  struct alignas(16) Slot {
    unsigned char bytes[64];
  };
  std::vector<Slot> slots;
  std::vector<double> scratch;
};

struct EmulatedLane {
  EmulatedGroupState* group = nullptr;
  int rank = 0;
};
inline thread_local EmulatedLane emulated_lane;

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
  static void sync() { emulated_lane.group->barrier.arrive_and_wait(); }
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
    g.barrier.arrive_and_wait();
    T y;
    std::memcpy(&y, g.slots[static_cast<std::size_t>(src)].bytes, sizeof(T));
    g.barrier.arrive_and_wait();
    return y;
  }
};

// Runs body(rank) on G threads that form one EmulatedGroup<G>.
template <int G, class Body>
void run_group(const Body& body) {
  EmulatedGroupState state(G);
  std::vector<std::thread> lanes;
  for (int r = 0; r < G; ++r) {
    lanes.emplace_back([&state, &body, r] {
      emulated_lane = EmulatedLane{&state, r};
      body(r);
      emulated_lane = EmulatedLane{};
    });
  }
  for (auto& t : lanes) t.join();
}

}  // namespace chens::test
