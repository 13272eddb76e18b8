#include "output/checkpoint_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "output/durable_io.hpp"

namespace chens {

namespace {

constexpr char magic[8] = {'C', 'H', 'E', 'N', 'S', 'C', 'K', 'P'};
// 5: eight metrics per accumulator row and passage slot (lyapunov, issue 43), and a tangent
// system's state two numbers longer; 4: the integration's and the measurement's seconds and the sampled cost per instance-step
// after the wall time (a resumed run's cost is that of all its parts); 3: the groups' statistics
// after the ensemble's ([parameters] group_by, issue 22); 2: seven
// metrics per accumulator row (wedge_error, issue 8); 1 had six.
constexpr std::uint32_t format_version = 5;

// A checksum over 8-byte words (FNV-1a's prime on words, then a final avalanche): fast
// enough for gigabytes of instances, and any flipped, lost or swapped word changes it.
struct Checksum {
  std::uint64_t h = 0xcbf29ce484222325ull;
  unsigned char tail[8] = {};
  std::size_t tail_n = 0;
  void word(std::uint64_t w) { h = (h ^ w) * 0x100000001b3ull; }
  void add(const void* data, std::size_t n) {
    if (n == 0) return;  // an empty array's data() may be null, which memcpy must not see
    const auto* p = static_cast<const unsigned char*>(data);
    if (tail_n > 0) {  // complete the word an earlier call left open
      const std::size_t take = std::min(n, sizeof tail - tail_n);
      std::memcpy(tail + tail_n, p, take);
      tail_n += take;
      p += take;
      n -= take;
      if (tail_n < sizeof tail) return;
      word(load(tail));
      tail_n = 0;
    }
    for (; n >= 8; n -= 8, p += 8) word(load(p));
    std::memcpy(tail, p, n);
    tail_n = n;
  }
  static std::uint64_t load(const unsigned char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
  }
  std::uint64_t value() const {
    std::uint64_t x = h;
    for (std::size_t i = 0; i < tail_n; ++i) x = (x ^ tail[i]) * 0x100000001b3ull;
    x ^= static_cast<std::uint64_t>(tail_n);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
};

class Writer {
 public:
  // path: the temporary file written; shown: the checkpoint it becomes, for messages.
  Writer(const std::string& path, const std::string& shown) : path_(shown) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw CheckpointError("cannot create " + shown + ": " + std::strerror(errno));
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  void bytes(const void* data, std::size_t n) {
    sum_.add(data, n);
    raw(data, n);
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof v);
  }
  template <class T>
  void array(const T* data, std::size_t n) {
    value(static_cast<std::uint64_t>(n));
    bytes(data, n * sizeof(T));
  }
  template <class T>
  void vector(const std::vector<T>& v) {
    array(v.data(), v.size());
  }
  void finish() {
    const std::uint64_t s = sum_.value();
    raw(&s, sizeof s);
    if (::fsync(fd_) != 0) throw CheckpointError("cannot flush " + path_ + ": " + std::strerror(errno));
    if (::close(fd_) != 0) {
      fd_ = -1;
      throw CheckpointError("cannot close " + path_ + ": " + std::strerror(errno));
    }
    fd_ = -1;
  }

 private:
  void raw(const void* data, std::size_t n) {
    if (const int error = write_all(fd_, data, n))
      throw CheckpointError("cannot write " + path_ + ": " + std::strerror(error));
  }
  std::string path_;
  int fd_ = -1;
  Checksum sum_;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw CheckpointError("cannot open " + path + ": " + std::strerror(errno));
    in_.seekg(0, std::ios::end);
    size_ = static_cast<std::uint64_t>(in_.tellg());
    in_.seekg(0);
  }
  void bytes(void* data, std::size_t n) {
    if (n > remaining()) throw truncated();
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(n));
    if (!in_) throw truncated();
    pos_ += n;
    sum_.add(data, n);
  }
  template <class T>
  T value() {
    T v{};
    bytes(&v, sizeof v);
    return v;
  }
  template <class T>
  std::vector<T> vector() {
    const auto n = value<std::uint64_t>();
    if (n > remaining() / sizeof(T)) throw truncated();  // before allocating what a damaged length asks
    std::vector<T> v(n);
    bytes(v.data(), n * sizeof(T));
    return v;
  }
  // An array of bytes handed to `take` in pieces of at most `piece` bytes, not kept.
  void pieces(const InstanceSink& take, std::size_t piece) {
    const auto n = value<std::uint64_t>();
    if (n > remaining()) throw truncated();
    std::vector<unsigned char> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(n, piece)));
    for (std::uint64_t at = 0; at < n; at += piece) {
      const auto m = static_cast<std::size_t>(std::min<std::uint64_t>(piece, n - at));
      bytes(buffer.data(), m);
      take(buffer.data(), m);
    }
  }
  std::string string() {
    const std::vector<char> v = vector<char>();
    return {v.begin(), v.end()};
  }
  void finish() {
    const std::uint64_t expect = sum_.value();
    std::uint64_t stored = 0;
    if (remaining() != sizeof stored) throw damaged();
    in_.read(reinterpret_cast<char*>(&stored), sizeof stored);
    if (!in_ || stored != expect) throw damaged();
  }
  CheckpointError damaged() const {
    return CheckpointError(path_ + " is damaged: its checksum does not match its contents (a disk error, or the file "
                                   "was changed); it cannot be resumed");
  }

 private:
  std::uint64_t remaining() const { return size_ - pos_; }
  CheckpointError truncated() const {
    return CheckpointError(path_ + " is cut short (" + std::to_string(size_) + " bytes): it cannot be resumed");
  }
  std::string path_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
  Checksum sum_;
};

}  // namespace

std::uint64_t run_key(const std::string& version, const std::string& resolved_study) {
  Checksum c;
  c.add(version.data(), version.size());
  c.word(0);
  c.add(resolved_study.data(), resolved_study.size());
  return c.value();
}

void write_checkpoint(const std::string& path, std::uint64_t key, const CheckpointState& c) {
  const std::size_t inst = c.size * c.instance_bytes;
  const unsigned char* bytes = c.instances_view ? c.instances_view : c.instances.data();
  write_checkpoint(path, key, c, [bytes, inst](const InstanceSink& sink) { sink(bytes, inst); });
}

void write_checkpoint(const std::string& path, std::uint64_t key, const CheckpointState& c,
                      const InstanceSource& instances) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path tmp =
      target.parent_path() / (".chens-partial-" + std::to_string(::getpid()) + "-" + target.filename().string());
  try {
    Writer w(tmp.string(), path);
    w.bytes(magic, sizeof magic);
    w.value(format_version);
    w.value(key);
    w.array(c.backend.data(), c.backend.size());
    w.value(c.instance_bytes);
    w.value(c.size);
    w.value(c.samples);
    w.value(c.done);
    w.value(c.wall_seconds);
    w.value(c.integration_seconds);
    w.value(c.measurement_seconds);
    w.vector(c.step_cost);
    const std::uint64_t inst = c.size * c.instance_bytes;
    w.value(inst);
    std::uint64_t handed = 0;
    std::string failed;  // the first write that failed: the rest of the bytes are dropped
    instances([&](const void* data, std::size_t n) {
      handed += n;
      if (!failed.empty() || handed > inst) return;
      try {
        w.bytes(data, n);
      } catch (const std::exception& e) {
        failed = e.what();
      }
    });
    if (!failed.empty()) throw CheckpointError(failed);
    if (handed != inst)
      throw CheckpointError("a checkpoint of " + std::to_string(c.size) + " instances needs " + std::to_string(inst) +
                            " bytes of them, " + std::to_string(handed) + " were handed over");
    w.vector(c.series);
    w.vector(c.group_series);
    const RecordedTrajectories& r = c.recorded;
    w.vector(r.instances);
    w.value(static_cast<std::int64_t>(r.state_size));
    w.value(static_cast<std::uint8_t>(r.has_reference));
    w.vector(r.t);
    w.vector(r.state);
    w.vector(r.reference);
    w.vector(r.metrics);
    w.vector(r.measured);
    w.vector(c.kept.initial_state);
    w.vector(c.kept.initial_physical);
    w.finish();
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw CheckpointError("cannot rename the new checkpoint to " + path + ": " + ec.message());
  }
  sync_directory(target.parent_path());
}

namespace {

// Reads and checks the file; its instances into the state (take null) or handed to `take`.
CheckpointState read_file(const std::string& path, std::uint64_t key, const InstanceSink* take) {
  Reader r(path);
  char m[sizeof magic];
  r.bytes(m, sizeof m);
  if (std::memcmp(m, magic, sizeof magic) != 0) throw CheckpointError(path + " is not a chens checkpoint");
  const auto version = r.value<std::uint32_t>();
  if (version != format_version)
    throw CheckpointError(path + " has checkpoint format " + std::to_string(version) + "; this chens reads format " +
                          std::to_string(format_version));
  const auto stored_key = r.value<std::uint64_t>();
  CheckpointState c;
  c.backend = r.string();
  c.instance_bytes = r.value<std::uint64_t>();
  c.size = r.value<std::uint64_t>();
  c.samples = r.value<std::int64_t>();
  c.done = r.value<std::int64_t>();
  c.wall_seconds = r.value<double>();
  c.integration_seconds = r.value<double>();
  c.measurement_seconds = r.value<double>();
  c.step_cost = r.vector<std::uint64_t>();
  if (take) {
    r.pieces(*take, checkpoint_piece_bytes);
  } else {
    c.instances = r.vector<unsigned char>();
  }
  c.series = r.vector<SampleStats>();
  c.group_series = r.vector<SampleStats>();
  RecordedTrajectories& t = c.recorded;
  t.instances = r.vector<std::uint64_t>();
  t.state_size = static_cast<int>(r.value<std::int64_t>());
  t.has_reference = r.value<std::uint8_t>() != 0;
  t.t = r.vector<double>();
  t.state = r.vector<double>();
  t.reference = r.vector<double>();
  t.metrics = r.vector<double>();
  t.measured = r.vector<unsigned char>();
  c.kept.initial_state = r.vector<double>();
  c.kept.initial_physical = r.vector<double>();
  r.finish();
  // The key last: a damaged file says it is damaged, not that it belongs to another study.
  if (stored_key != key)
    throw CheckpointError(path + " was written for another run: the study or the chens version differs from the one "
                                 "being resumed (resume.json changed, or the file was copied from elsewhere)");
  return c;
}

}  // namespace

CheckpointState read_checkpoint(const std::string& path, std::uint64_t key) { return read_file(path, key, nullptr); }

CheckpointState read_checkpoint(const std::string& path, std::uint64_t key, const InstanceSink& take) {
  return read_file(path, key, &take);
}

}  // namespace chens
