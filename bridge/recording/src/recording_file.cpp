#include "flockbridge/bridge/recording_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>
#include <variant>

namespace flockbridge::bridge {

namespace mcap = protocol::mcap;

namespace {

/// How far into a file its head (metadata and hello) may be: they are its first records.
constexpr std::uint64_t kMostHead = 4U << 20U;

}  // namespace

mcap::Decompress zstd_decompress() {
  return [](std::string_view compression, protocol::ByteView compressed,
            std::uint64_t uncompressed_size) -> protocol::Result<protocol::Bytes> {
    if (compression != "zstd") {
      return protocol::Error{"chunks compressed with \"" + std::string(compression) +
                             "\", which the bridge does not read"};
    }
    protocol::Bytes out(uncompressed_size);
    const std::size_t size = ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(size) != 0) return protocol::Error{std::string("zstd: ") + ZSTD_getErrorName(size)};
    if (size != uncompressed_size) return protocol::Error{"a chunk is shorter than its header says"};
    return out;
  };
}

RecordingFile::RecordingFile(int fd, std::string path) : fd_(fd), path_(std::move(path)), reader_(zstd_decompress()) {}

RecordingFile::~RecordingFile() {
  if (fd_ >= 0) ::close(fd_);
}

protocol::Result<std::unique_ptr<RecordingFile>> RecordingFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return protocol::Error{"cannot read the recording " + path + ": " + std::strerror(errno)};
  std::unique_ptr<RecordingFile> file(new RecordingFile(fd, path));
  bool metadata = false;
  bool hello = false;
  while (!(metadata && hello)) {
    auto item = file->next_item();
    if (!item || file->reader_.offset() > kMostHead) break;
    if (const auto* found = std::get_if<mcap::Metadata>(&*item); found != nullptr && found->name == "flockbridge") {
      const auto value = [&](const char* key) {
        const auto at = found->values.find(key);
        return at == found->values.end() ? std::string() : at->second;
      };
      RecordingIdentity& id = file->identity_;
      id.robot = value("robot");
      id.family = value("family");
      id.model = value("model");
      id.session = value("session");
      id.simulated = value("simulated") == "true";
      metadata = true;
    } else if (const auto* message = std::get_if<mcap::Message>(&*item)) {
      const auto channel = file->reader_.channels().find(message->channel_id);
      const auto topic = channel == file->reader_.channels().end() ? std::nullopt : topic_named(channel->second.topic);
      if (!topic) continue;
      if (*topic == Topic::Hello && !hello) {
        file->identity_.hello = message->data;
        hello = true;
      } else {
        file->ahead_.push_back({*topic, message->log_time, message->data});
      }
    }
  }
  if (!file->error_.empty()) return protocol::Error{"cannot replay " + path + ": " + file->error_};
  for (const auto& [id, channel] : file->reader_.channels()) {
    const auto schema = file->reader_.schemas().find(channel.schema_id);
    if (channel.topic == topic_name(Topic::Sensor) && schema != file->reader_.schemas().end()) {
      file->identity_.sensor_schema = schema->second.data;
    }
  }
  if (!metadata || !hello || file->identity_.family.empty()) {
    return protocol::Error{"cannot replay " + path +
                           ": it is not a flockbridge recording (no robot and hello at its start; record one with "
                           "--record DIR or record_start)"};
  }
  return file;
}

std::optional<mcap::Item> RecordingFile::next_item() {
  std::array<protocol::Byte, 64U << 10U> buffer{};
  while (true) {
    if (auto item = reader_.next()) return item;
    if (reader_.state() == mcap::Reader::State::Failed) {
      if (error_.empty()) error_ = path_ + " is broken: " + reader_.error();
      return std::nullopt;
    }
    if (reader_.state() == mcap::Reader::State::Ended || at_end_) return std::nullopt;
    const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = "cannot read " + path_ + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) {
      at_end_ = true;
      continue;
    }
    reader_.feed(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)));
  }
}

std::optional<RecordedMessage> RecordingFile::next() {
  if (!ahead_.empty()) {
    RecordedMessage message = std::move(ahead_.front());
    ahead_.pop_front();
    return message;
  }
  while (auto item = next_item()) {
    const auto* message = std::get_if<mcap::Message>(&*item);
    if (message == nullptr) continue;
    const auto channel = reader_.channels().find(message->channel_id);
    if (channel == reader_.channels().end()) continue;
    if (const auto topic = topic_named(channel->second.topic)) {
      return RecordedMessage{*topic, message->log_time, message->data};
    }
  }
  return std::nullopt;
}

bool RecordingFile::cut_short() const noexcept {
  return at_end_ && reader_.state() == mcap::Reader::State::Reading;
}

}  // namespace flockbridge::bridge
