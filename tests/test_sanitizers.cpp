// The sanitizer build's check of itself (scripts/sanitize-tests.sh): its suite passing means
// "no report" only if the build's instrumentation reports at all. These cases make each kind of
// error the suite relies on in a unit compiled with the build's flags and expect the report,
// so that a flag lost from the build's CMAKE_CXX_FLAGS, or an instrumentation setting that
// checks less (a --param tried for build time, docs/performance.md), fails here instead of
// every case passing silently. Outside that build they skip with the reason.
#include <gtest/gtest.h>

#include <climits>
#include <vector>

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
constexpr const char* not_sanitized = "not built with AddressSanitizer and UndefinedBehaviorSanitizer "
                                      "(scripts/sanitize-tests.sh builds and runs this case)";

// Out of the optimiser's sight, so that each access or addition happens at run time.
[[gnu::noinline]] double read_at(const double* p, int i) { return p[i]; }
[[gnu::noinline]] void write_at(double* p, int i, double x) { p[i] = x; }
[[gnu::noinline]] int add(int a, int b) { return a + b; }

volatile int past_the_end = 7;  // not a constant the compiler could check

}  // namespace

// Each case's skip outside the sanitizer build and its death-test style, in one place.
class SanitizerDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sanitized) GTEST_SKIP() << not_sanitized;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(SanitizerDeathTest, AHeapReadOnePastTheEndIsReported) {
  EXPECT_DEATH(
      {
        std::vector<double> v(7, 1.0);
        volatile double x = read_at(v.data(), past_the_end);
        (void)x;
      },
      "heap-buffer-overflow");
}

TEST_F(SanitizerDeathTest, AStackWriteOnePastAnArrayIsReported) {
  EXPECT_DEATH(
      {
        double state[7] = {};
        write_at(state, past_the_end, 1.0);
        volatile double x = state[0];
        (void)x;
      },
      "stack-buffer-overflow");
}

TEST_F(SanitizerDeathTest, AReadAfterFreeIsReported) {
  EXPECT_DEATH(
      {
        auto* v = new std::vector<double>(7, 1.0);
        const double* volatile p = v->data();  // hidden from -Wuse-after-free: the read is the point
        delete v;
        volatile double x = read_at(p, 0);
        (void)x;
      },
      "heap-use-after-free");
}

TEST_F(SanitizerDeathTest, ASignedIntegerOverflowIsReported) {
  volatile int one = 1;
  EXPECT_DEATH(
      {
        volatile int x = add(INT_MAX, one);
        (void)x;
      },
      "signed integer overflow");
}
