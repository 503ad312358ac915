// A TensorBoard event file (`tensorboard --logdir RUNS` reads it): scalars, histograms and
// markdown text, each an Event record framed as TensorFlow's record format frames them (length,
// masked CRC-32C of the length, data, masked CRC-32C of the data). Each record is written with
// one write call, so a crash leaves whole records; TensorBoard skips a torn last one.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace hwt {

class TensorBoardWriter {
 public:
  // Creates DIR/events.out.tfevents.<unix seconds>.<host>.<pid>.hwt (the prefix is what
  // TensorBoard looks for); InputError when it cannot.
  explicit TensorBoardWriter(const std::string& dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void scalar(const std::string& tag, int64_t step, double value);
  // `values` as 30 equal-width buckets between their least and greatest finite value; non-finite
  // values are left out of the buckets and the sums.
  void histogram(const std::string& tag, int64_t step, std::span<const float> values);
  void text(const std::string& tag, int64_t step, const std::string& markdown);

  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& bytes);

  std::string path_;
  int fd_ = -1;
};

}  // namespace hwt
