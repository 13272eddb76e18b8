// CUDA error checks that name what failed; device buffers, page-locked host buffers for
// asynchronous copies, and owning streams and events.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>

namespace chens::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Device memory (Pinned = false) or page-locked host memory, the target of cudaMemcpyAsync
// (Pinned = true); uninitialised: every buffer here is written before it is read. (A
// thrust::device_vector constructs its elements, a kernel over every element even with a
// do-nothing allocator::construct: measurable for the gigabytes of a 10^7-instance run.)
template <class T, bool Pinned>
class CudaArray {
 public:
  explicit CudaArray(std::size_t n) : n_(n) {
    if (n == 0) return;
    void** p = reinterpret_cast<void**>(&p_);
    if constexpr (Pinned) {
      check(cudaMallocHost(p, n * sizeof(T)), "cudaMallocHost");
    } else {
      check(cudaMalloc(p, n * sizeof(T)), "cudaMalloc");
    }
  }
  ~CudaArray() {
    if constexpr (Pinned) {
      cudaFreeHost(p_);
    } else {
      cudaFree(p_);
    }
  }
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;
  T* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

template <class T>
using DeviceArray = CudaArray<T, false>;
template <class T>
using PinnedBuffer = CudaArray<T, true>;

template <class T>
T* raw(const DeviceArray<T>& a) {
  return a.data();
}

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return s_; }  // NOLINT: a stream is used where CUDA takes one
  void sync(const char* what) const { check(cudaStreamSynchronize(s_), what); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(bool timing = false) {
    check(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
  }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) const { check(cudaEventRecord(e_, s), "cudaEventRecord"); }
  void wait_in(cudaStream_t s) const { check(cudaStreamWaitEvent(s, e_, 0), "cudaStreamWaitEvent"); }
  void sync(const char* what) const { check(cudaEventSynchronize(e_), what); }
  // Seconds from `start` to this event (both recorded with timing, both complete).
  double seconds_since(const Event& start) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.e_, e_), "cudaEventElapsedTime");
    return 1e-3 * static_cast<double>(ms);
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace chens::cuda
