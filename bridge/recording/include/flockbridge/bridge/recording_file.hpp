// A recording (recorder.hpp) read back from its file, in order and a piece
// at a time, as a replay plays it: what it says of its robot first, then its
// messages. A file cut short (a bridge killed while it recorded) reads up to
// its last whole chunk; one that is broken stops where it is, with a reason.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "flockbridge/bridge/recorder.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/mcap/reader.hpp"

namespace flockbridge::bridge {

/// Chunks as the recorder compresses them (zstd), for protocol::mcap::Reader.
[[nodiscard]] protocol::mcap::Decompress zstd_decompress();

/// One message of a recording.
struct RecordedMessage {
  Topic topic = Topic::Sensor;
  std::uint64_t log_time = 0;  ///< when it was recorded, in nanoseconds since the epoch
  std::string data;            ///< its JSON
};

class RecordingFile {
 public:
  /// Opens a recording and reads what it says of its robot (its metadata and
  /// its hello); an Error that says why when the file cannot be read or is
  /// not a flockbridge recording.
  [[nodiscard]] static protocol::Result<std::unique_ptr<RecordingFile>> open(const std::string& path);

  RecordingFile(const RecordingFile&) = delete;
  RecordingFile& operator=(const RecordingFile&) = delete;
  ~RecordingFile();

  [[nodiscard]] const RecordingIdentity& identity() const noexcept { return identity_; }
  /// The next message, reading more of the file when needed (64 KiB at a
  /// time); nothing at the end, or where the file is broken (error()).
  [[nodiscard]] std::optional<RecordedMessage> next();
  /// Why the reading stopped before the file's end ("" when it did not).
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// The file ended without its summary: its recording was cut short.
  [[nodiscard]] bool cut_short() const noexcept;

 private:
  RecordingFile(int fd, std::string path);
  /// Reads until an item is ready or the file has ended.
  std::optional<protocol::mcap::Item> next_item();

  int fd_ = -1;
  std::string path_;
  bool at_end_ = false;
  protocol::mcap::Reader reader_;
  RecordingIdentity identity_;
  std::deque<RecordedMessage> ahead_;  ///< messages read while looking for the head
  std::string error_;
};

}  // namespace flockbridge::bridge
