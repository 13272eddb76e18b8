// A counting scalar for operation counts (tests/test_flop_counts.cpp): Counted wraps a
// double, performs every operation in double exactly as written (so results are bit for
// bit those of Real = double, which the test checks), and tallies each operation in
// thread-local counters. chens' per-instance code is instantiated with Real = Counted the
// way tests/support/dual.hpp plugs in: a constructor from double for the Real(c)
// constants, free operators, and math functions found by argument-dependent lookup
// (`using std::sqrt; sqrt(x)` resolves to the overload below).
//
// There is deliberately no conversion back to double: an operation this type does not
// model (std::pow, a std::-qualified call, ...) is a compile error, never an uncounted
// operation done in double.
//
// Two tallies are kept side by side:
//  - as_written: every operation each time the source performs it;
//  - distinct: each operation once per value it computes, i.e. after the two rewrites an
//    optimising compiler makes without changing any result: common subexpressions (the
//    same operation on the same operands, commutative operands in either order: the
//    repeated bond vectors q_{a+1} - q_a of the chain's primitives, psi recomputed by the
//    projection after the tolerance check, all_finite's x - x written twice) and the
//    IEEE-exact identities x * 1, 1 * x, x / 1, x - (+0), x + (-0) with a literal 1 or 0.
//    For this every value carries a value number: literals are numbered by their bits,
//    inputs and new results get fresh numbers, and a repeated operation returns the number
//    of its first result.
// Each tally is split by operand kind: an operation whose operands are all literals or
// model parameters (Counted::parameter: 1/m, 12 eps, w_a + w_{a+1}) gives the same value
// at every step, and a compiler evaluates it once per instance (loop-invariant code
// motion), so it is kept apart from the per-step work (state and step-size inputs,
// Counted::input).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>

namespace chens::test {

// Operations of one kind of operand (per-step or invariant).
struct OpTally {
  std::int64_t add = 0;
  std::int64_t sub = 0;
  std::int64_t mul = 0;
  std::int64_t div = 0;
  std::int64_t sqrt = 0;
  std::int64_t fma = 0;
  std::int64_t neg = 0;  // sign flips (unary minus)
  std::int64_t fabs = 0;
  std::int64_t cmp = 0;  // <, >, <=, >=, ==, !=

  friend OpTally operator-(OpTally a, const OpTally& b) {
    a.add -= b.add;
    a.sub -= b.sub;
    a.mul -= b.mul;
    a.div -= b.div;
    a.sqrt -= b.sqrt;
    a.fma -= b.fma;
    a.neg -= b.neg;
    a.fabs -= b.fabs;
    a.cmp -= b.cmp;
    return a;
  }
};

struct OpSplit {
  OpTally per_step;   // at least one operand depends on the state or the step size
  OpTally invariant;  // all operands are literals or model parameters

  friend OpSplit operator-(const OpSplit& a, const OpSplit& b) {
    return OpSplit{a.per_step - b.per_step, a.invariant - b.invariant};
  }
};

struct OpCounts {
  OpSplit as_written;
  OpSplit distinct;

  friend OpCounts operator-(const OpCounts& a, const OpCounts& b) {
    return OpCounts{a.as_written - b.as_written, a.distinct - b.distinct};
  }
};

enum class Op : int { add, sub, mul, div, sqrt, fma, neg, fabs, lt, gt, le, ge, eq, ne };

// Counting state of this thread: the tallies, the value numbers of the operations seen
// since the last reset, and the next fresh value number.
struct OpCounter {
  OpCounts counts;
  // (op, operand keys) -> value number of the result; an operand key is (is literal, bits
  // of a literal or value number of a computed value or input).
  using Key = std::tuple<int, bool, std::uint64_t, bool, std::uint64_t, bool, std::uint64_t>;
  std::map<Key, std::uint64_t> seen;
  std::uint64_t next_number = 1;

  // Forget the tallies and the operations seen (values keep their numbers).
  void reset() {
    counts = OpCounts{};
    seen.clear();
  }
};

inline thread_local OpCounter op_counter;

struct Counted {
  double v = 0.0;
  bool per_step = false;     // depends on the state or the step size
  std::uint64_t number = 0;  // value number; 0: a literal, numbered by its bits

  Counted() = default;
  Counted(double c) : v(c) {}  // NOLINT: Real(1), Real(0.5), ... are literals
  // A per-step input: a state component or the step size.
  static Counted input(double x) { return made(x, true); }
  // A model parameter: the same at every step, but not known to the compiler.
  static Counted parameter(double x) { return made(x, false); }

  bool literal() const { return number == 0; }
  static Counted made(double x, bool per_step) {
    Counted r(x);
    r.per_step = per_step;
    r.number = op_counter.next_number++;
    return r;
  }
};

namespace detail {

inline std::int64_t& field(OpTally& t, Op op) {
  switch (op) {
    case Op::add: return t.add;
    case Op::sub: return t.sub;
    case Op::mul: return t.mul;
    case Op::div: return t.div;
    case Op::sqrt: return t.sqrt;
    case Op::fma: return t.fma;
    case Op::neg: return t.neg;
    case Op::fabs: return t.fabs;
    default: return t.cmp;
  }
}

inline std::uint64_t key_bits(const Counted& a) { return a.literal() ? std::bit_cast<std::uint64_t>(a.v) : a.number; }

inline bool is_literal(const Counted& a, double c) {
  return a.literal() && std::bit_cast<std::uint64_t>(a.v) == std::bit_cast<std::uint64_t>(c);
}

// Tallies op on operands a, b, c (unused ones literal 0) and returns the result with value
// v: a fresh value, the first result of the same operation, or the operand `same` that an
// IEEE-exact identity leaves unchanged.
inline Counted record(Op op, double v, const Counted& a, const Counted& b = Counted(), const Counted& c = Counted(),
                      const Counted* same = nullptr) {
  const bool per_step = a.per_step || b.per_step || c.per_step;
  OpCounter& k = op_counter;
  field(per_step ? k.counts.as_written.per_step : k.counts.as_written.invariant, op) += 1;
  if (same) return *same;
  const Counted* x = &a;
  const Counted* y = &b;
  if ((op == Op::add || op == Op::mul) &&
      std::make_pair(!y->literal(), key_bits(*y)) < std::make_pair(!x->literal(), key_bits(*x))) {
    std::swap(x, y);  // commutative: one key for a op b and b op a
  }
  const OpCounter::Key key{int(op), x->literal(), key_bits(*x), y->literal(), key_bits(*y), c.literal(), key_bits(c)};
  Counted r(v);
  r.per_step = per_step;
  const auto it = k.seen.find(key);
  if (it != k.seen.end()) {
    r.number = it->second;
    return r;
  }
  field(per_step ? k.counts.distinct.per_step : k.counts.distinct.invariant, op) += 1;
  r.number = k.next_number++;
  k.seen.emplace(key, r.number);
  return r;
}

}  // namespace detail

// The operations f performs on Counted values (this thread).
template <class F>
OpCounts count_ops(F&& f) {
  op_counter.reset();
  f();
  return op_counter.counts;
}

inline Counted operator+(const Counted& a, const Counted& b) {
  const Counted* same = detail::is_literal(b, -0.0) ? &a : detail::is_literal(a, -0.0) ? &b : nullptr;
  return detail::record(Op::add, a.v + b.v, a, b, Counted(), same);
}
inline Counted operator-(const Counted& a, const Counted& b) {
  return detail::record(Op::sub, a.v - b.v, a, b, Counted(), detail::is_literal(b, 0.0) ? &a : nullptr);
}
inline Counted operator*(const Counted& a, const Counted& b) {
  const Counted* same = detail::is_literal(b, 1.0) ? &a : detail::is_literal(a, 1.0) ? &b : nullptr;
  return detail::record(Op::mul, a.v * b.v, a, b, Counted(), same);
}
inline Counted operator/(const Counted& a, const Counted& b) {
  return detail::record(Op::div, a.v / b.v, a, b, Counted(), detail::is_literal(b, 1.0) ? &a : nullptr);
}
inline Counted operator-(const Counted& a) { return detail::record(Op::neg, -a.v, a); }
inline Counted operator+(const Counted& a) { return a; }

inline Counted& operator+=(Counted& a, const Counted& b) { return a = a + b; }
inline Counted& operator-=(Counted& a, const Counted& b) { return a = a - b; }
inline Counted& operator*=(Counted& a, const Counted& b) { return a = a * b; }
inline Counted& operator/=(Counted& a, const Counted& b) { return a = a / b; }

#define CHENS_COUNTED_COMPARISON(op, name)                      \
  inline bool operator op(const Counted& a, const Counted& b) { \
    detail::record(Op::name, 0.0, a, b);                        \
    return a.v op b.v;                                          \
  }
CHENS_COUNTED_COMPARISON(<, lt)
CHENS_COUNTED_COMPARISON(>, gt)
CHENS_COUNTED_COMPARISON(<=, le)
CHENS_COUNTED_COMPARISON(>=, ge)
CHENS_COUNTED_COMPARISON(==, eq)
CHENS_COUNTED_COMPARISON(!=, ne)
#undef CHENS_COUNTED_COMPARISON

// Math functions, found by argument-dependent lookup.
inline Counted sqrt(const Counted& a) { return detail::record(Op::sqrt, std::sqrt(a.v), a); }
inline Counted fabs(const Counted& a) { return detail::record(Op::fabs, std::fabs(a.v), a); }
inline Counted abs(const Counted& a) { return fabs(a); }
inline Counted fma(const Counted& a, const Counted& b, const Counted& c) {
  return detail::record(Op::fma, std::fma(a.v, b.v, c.v), a, b, c);
}

}  // namespace chens::test
