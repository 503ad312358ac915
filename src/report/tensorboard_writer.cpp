#include "report/tensorboard_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <system_error>

#include "core/crc32c.h"
#include "core/error.h"
#include "tensorboard.pb.h"

namespace hwt {
namespace {

constexpr int kBuckets = 30;
constexpr int kDtString = 7;  // TensorFlow's DataType DT_STRING

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "host";
  return buf;
}

tensorboard::Event event_at(int64_t step) {
  tensorboard::Event e;
  e.set_wall_time(now_seconds());
  e.set_step(step);
  return e;
}

}  // namespace

TensorBoardWriter::TensorBoardWriter(const std::string& dir)
    : path_(fmt::format("{}/events.out.tfevents.{}.{}.{}.hwt", dir,
                        static_cast<int64_t>(now_seconds()), host_name(), ::getpid())) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) fail_input("cannot write {}: {}", path_, std::generic_category().message(errno));
  tensorboard::Event e = event_at(0);
  e.set_file_version("brain.Event:2");
  write_record(e.SerializeAsString());
}

TensorBoardWriter::~TensorBoardWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TensorBoardWriter::write_record(const std::string& data) {
  const uint64_t length = data.size();
  std::string record(sizeof length, '\0');
  std::memcpy(record.data(), &length, sizeof length);  // little-endian, as x86-64 and ARM store it
  const uint32_t length_crc = masked_crc32c(&length, sizeof length);
  record.append(reinterpret_cast<const char*>(&length_crc), sizeof length_crc);
  record += data;
  const uint32_t data_crc = masked_crc32c(data.data(), data.size());
  record.append(reinterpret_cast<const char*>(&data_crc), sizeof data_crc);
  for (size_t done = 0; done < record.size();) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_input("cannot write {}: {}", path_, std::generic_category().message(errno));
    done += static_cast<size_t>(n);
  }
}

void TensorBoardWriter::scalar(const std::string& tag, int64_t step, double value) {
  tensorboard::Event e = event_at(step);
  tensorboard::SummaryValue* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  write_record(e.SerializeAsString());
}

void TensorBoardWriter::histogram(const std::string& tag, int64_t step,
                                  std::span<const float> values) {
  double lo = INFINITY, hi = -INFINITY, sum = 0, sum_sq = 0, num = 0;
  for (float x : values)
    if (std::isfinite(x)) {
      lo = std::min(lo, static_cast<double>(x));
      hi = std::max(hi, static_cast<double>(x));
      sum += x;
      sum_sq += static_cast<double>(x) * x;
      ++num;
    }
  tensorboard::Event e = event_at(step);
  tensorboard::SummaryValue* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  tensorboard::HistogramProto* h = v->mutable_histo();
  h->set_num(num);
  h->set_sum(sum);
  h->set_sum_squares(sum_sq);
  if (num > 0) {
    h->set_min(lo);
    h->set_max(hi);
    // Equal widths; all values equal: one bucket at that value.
    const int buckets = hi > lo ? kBuckets : 1;
    const double width = hi > lo ? (hi - lo) / buckets : 0;
    std::vector<double> counts(static_cast<size_t>(buckets), 0.0);
    for (float x : values)
      if (std::isfinite(x)) {
        const int i = width > 0 ? static_cast<int>((x - lo) / width) : 0;
        counts[static_cast<size_t>(std::clamp(i, 0, buckets - 1))] += 1;
      }
    for (int i = 0; i < buckets; ++i) {
      h->add_bucket_limit(i + 1 == buckets ? hi : lo + width * (i + 1));
      h->add_bucket(counts[static_cast<size_t>(i)]);
    }
  }
  write_record(e.SerializeAsString());
}

void TensorBoardWriter::text(const std::string& tag, int64_t step, const std::string& markdown) {
  tensorboard::Event e = event_at(step);
  tensorboard::SummaryValue* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  tensorboard::TensorProto* t = v->mutable_tensor();
  t->set_dtype(kDtString);
  t->mutable_tensor_shape();  // a scalar: no dimensions
  t->add_string_val(markdown);
  write_record(e.SerializeAsString());
}

}  // namespace hwt
