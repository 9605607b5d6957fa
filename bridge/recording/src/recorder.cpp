#include "flockbridge/bridge/recorder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <utility>

namespace flockbridge::bridge {

namespace mcap = protocol::mcap;

namespace {

/// What to do about a recording folder the bridge cannot write.
constexpr std::string_view kChooseAFolder =
    "; start the bridge with --record DIR (a folder it may write, e.g. ~/recordings), or give the bridge's user "
    "that folder";

constexpr std::string_view kProfile = "";  // not a ROS profile: plain JSON messages
constexpr std::string_view kExtension = ".mcap";
/// zstd's level: a few percent of a Raspberry Pi's core at a robot's full rate (docs/performance.md).
constexpr int kZstdLevel = 3;

std::string errno_text(int error) {
  return std::strerror(error);
}

/// `robot-20261127-093012.mcap` in local time, the robot's name made safe for a file name.
std::string file_stem(const std::string& robot, std::time_t now) {
  std::string safe;
  for (const char c : robot)
    safe += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_') ? c : '_';
  if (safe.empty()) safe = "robot";
  std::tm local{};
  ::localtime_r(&now, &local);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "%Y%m%d-%H%M%S", &local);
  return safe + "-" + stamp.data();
}

}  // namespace

std::string schema_text(std::string_view title, std::string_view properties, std::string_view required) {
  return std::string(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","title":")") + std::string(title) +
         R"(","type":"object","properties":)" + std::string(properties) +
         (required.empty() ? "" : R"(,"required":)" + std::string(required)) + "}";
}

std::string topic_schema(Topic topic) {
  constexpr std::string_view kClient = R"("client":{"type":"integer"},"kind":{"type":"string"},)"
                                       R"("peer":{"type":"string"},"role":{"type":"string"})";
  switch (topic) {
    case Topic::Command:
      return schema_text(
          "flockbridge command",
          "{" + std::string(kClient) +
              R"(,"id":{},"request":{"type":"object"},"bytes":{"type":"string","description":"the family's bytes, as hex pairs"}})",
          R"(["client","bytes"])");
    case Topic::Answer:
      return schema_text(
          "flockbridge answer",
          "{" + std::string(kClient) +
              R"(,"id":{},"ok":{"type":"boolean"},"confirmed":{"type":["boolean","null"]},"error":{"type":"object"},"told":{"type":"boolean"}})",
          R"(["client","ok"])");
    case Topic::Client:
      return schema_text("flockbridge client",
                         "{" + std::string(kClient) + R"(,"event":{"type":"string"},"reason":{"type":"string"}})",
                         R"(["client","event"])");
    case Topic::Link:
      return schema_text("flockbridge link",
                         R"({"type":{"const":"link"},"state":{"type":"string"},"reason":{"type":"string"}})");
    case Topic::Lease:
      return schema_text("flockbridge lease", R"({"type":{"const":"lease"},"holder":{}})");
    case Topic::Emergency:
      return schema_text("flockbridge emergency", R"({"type":{"type":"string"},"latched":{"type":"boolean"}})");
    case Topic::Hello:
      return schema_text(
          "flockbridge hello",
          R"({"type":{"const":"hello"},"robot":{"type":"string"},"model":{"type":"string"},"geometry":{"type":"object"}})");
    case Topic::Recording:
      return schema_text("flockbridge recording", R"({"event":{"type":"string"},"by":{"type":"string"}})");
    case Topic::Native:
      return schema_text(
          "flockbridge native",
          R"({"json":{"type":["string","null"],"description":"the topic of this message's JSON form, recorded at the same time; null: the family's stream alone"},"bytes":{"type":"string","description":"what the family's own programs got, as hex pairs"}})",
          R"(["json","bytes"])");
    case Topic::Robot:
    case Topic::Sensor:
      break;
  }
  return schema_text("flockbridge message", R"({"type":{"type":"string"}})");
}

std::string topic_schema_name(Topic topic, std::string_view family) {
  std::string name = "flockbridge.";
  if (topic == Topic::Sensor) {
    name.append(family).append(".sensor");
  } else {
    name += topic_name(topic).substr(1);
  }
  return name;
}

std::string_view topic_name(Topic topic) noexcept {
  switch (topic) {
    case Topic::Sensor:
      return "/sensor";
    case Topic::Robot:
      return "/robot";
    case Topic::Command:
      return "/command";
    case Topic::Answer:
      return "/answer";
    case Topic::Lease:
      return "/lease";
    case Topic::Emergency:
      return "/emergency";
    case Topic::Link:
      return "/link";
    case Topic::Client:
      return "/client";
    case Topic::Hello:
      return "/hello";
    case Topic::Recording:
      return "/recording";
    case Topic::Native:
      return "/native";
  }
  return "/unknown";
}

std::optional<Topic> topic_named(std::string_view name) noexcept {
  for (std::uint16_t id = 1; id <= kTopicCount; ++id) {
    if (topic_name(static_cast<Topic>(id)) == name) return static_cast<Topic>(id);
  }
  return std::nullopt;
}

/// A piece of work for the worker thread, and what it found.
struct Recorder::Job {
  enum class Kind : std::uint8_t { Begin, Chunk, Identity, Finish };
  Kind kind = Kind::Chunk;
  // In.
  RecordSettings settings;
  RecordingIdentity identity;
  mcap::ChunkBuilder chunk;
  std::uint64_t now_unix_ns = 0;
  // Out.
  std::string opened;  ///< a file begun
  std::string closed;  ///< a file ended
  std::uint64_t bytes = 0;
  std::uint64_t messages = 0;
  std::uint64_t lost = 0;  ///< messages of a chunk that could not be written
  std::vector<std::string> removed;
  std::string error;
};

/// The file being written; the worker thread's alone while a job runs.
struct Recorder::Worker {
  RecordSettings settings;
  RecordingIdentity identity;
  int fd = -1;
  std::string path;
  std::optional<mcap::Writer> writer;
  std::uint64_t good_size = 0;  ///< what is on disk and whole
  std::uint64_t opened_ns = 0;
  std::uint64_t chunks = 0;  ///< of messages, in this file
  /// After a failure, no new file before this (a disk that refuses every
  /// write must not leave a file a second); the wait doubles up to a minute.
  std::uint64_t retry_at_ns = 0;
  std::uint64_t retry_wait_ns = 0;
  ZSTD_CCtx* zstd = ZSTD_createCCtx();
  protocol::Bytes compressed;

  Worker() = default;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker() {
    if (fd >= 0) ::close(fd);
    ZSTD_freeCCtx(zstd);
  }

  /// Writes `bytes` whole at the end of the file; on failure the file is cut
  /// back to its last whole record and closed, so that it stays readable.
  bool append(const protocol::Bytes& bytes, Job& job) {
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = n < 0 ? errno : ENOSPC;
        abandon(job, "cannot write " + path + ": " + errno_text(error));
        return false;
      }
      at += static_cast<std::size_t>(n);
    }
    good_size += bytes.size();
    job.bytes += bytes.size();
    return true;
  }

  /// No new file for a while after a failure: a second, doubling up to a minute.
  void wait_before_retry(const Job& job) {
    retry_wait_ns = std::clamp<std::uint64_t>(retry_wait_ns * 2, 1'000'000'000ULL, 60'000'000'000ULL);
    retry_at_ns = job.now_unix_ns + retry_wait_ns;
  }

  void abandon(Job& job, std::string why) {
    job.error = std::move(why);
    wait_before_retry(job);
    if (chunks == 0) {
      ::unlink(path.c_str());  // nothing in it worth keeping
      if (job.opened == path) job.opened.clear();
    } else {
      // Whole records only: the file reads in order up to here.
      (void)::ftruncate(fd, static_cast<off_t>(good_size));
    }
    job.closed = path;
    ::close(fd);
    fd = -1;
    writer.reset();
  }

  bool open(Job& job) {
    std::error_code ignored;
    std::filesystem::create_directories(settings.directory, ignored);
    const std::string stem = (std::filesystem::path(settings.directory) /
                              file_stem(identity.robot, static_cast<std::time_t>(job.now_unix_ns / 1'000'000'000ULL)))
                                 .string();
    for (int n = 1; n < 100 && fd < 0; ++n) {
      path = stem;
      if (n > 1) path.append("-").append(std::to_string(n));
      path += kExtension;
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
      job.error =
          "cannot create a file in " + settings.directory + ": " + errno_text(errno) + std::string(kChooseAFolder);
      wait_before_retry(job);
      return false;
    }
    remove_oldest(job);
    writer.emplace(std::string(kProfile), std::string("flockbridge ") + FLOCKBRIDGE_VERSION);
    good_size = 0;
    chunks = 0;
    opened_ns = job.now_unix_ns;
    protocol::Bytes head = writer->start();
    const auto add = [&](const protocol::Bytes& bytes) { head.insert(head.end(), bytes.begin(), bytes.end()); };
    for (std::uint16_t id = 1; id <= kTopicCount; ++id) {
      const auto topic = static_cast<Topic>(id);
      add(writer->schema({id, topic_schema_name(topic, identity.family), "jsonschema",
                          topic == Topic::Sensor ? identity.sensor_schema : topic_schema(topic)}));
      add(writer->channel({id, id, std::string(topic_name(topic)), "json", {}}));
    }
    add(writer->metadata({"flockbridge",
                          {{"robot", identity.robot},
                           {"family", identity.family},
                           {"model", identity.model},
                           {"session", identity.session},
                           {"simulated", identity.simulated ? "true" : "false"},
                           {"version", FLOCKBRIDGE_VERSION}}}));
    // The hello first, in a chunk of its own: each file says what robot it holds.
    // Dated no later than the file's first message, so that it is first in
    // time too (a chunk may have waited for the disk before the file began).
    mcap::ChunkBuilder hello;
    const std::uint64_t first = job.chunk.empty() ? job.now_unix_ns : std::min(job.now_unix_ns, job.chunk.start_time());
    hello.add_message(static_cast<std::uint16_t>(Topic::Hello), 0, first, first, protocol::as_bytes(identity.hello));
    add(writer->chunk(hello, "", {}));
    job.opened = path;
    return append(head, job);
  }

  void write_chunk(Job& job) {
    const std::uint64_t age_ns = job.now_unix_ns - opened_ns;
    if (fd >= 0 &&
        (good_size >= settings.file_mb * 1'000'000ULL ||
         age_ns >= static_cast<std::uint64_t>(
                       std::chrono::duration_cast<std::chrono::nanoseconds>(settings.file_minutes).count()))) {
      finish(job);
    }
    if (fd < 0 && (job.now_unix_ns < retry_at_ns || !open(job))) {
      job.lost += job.chunk.message_count();
      return;
    }
    const protocol::Bytes& records = job.chunk.records();
    compressed.resize(ZSTD_compressBound(records.size()));
    const std::size_t size =
        ZSTD_compressCCtx(zstd, compressed.data(), compressed.size(), records.data(), records.size(), kZstdLevel);
    const protocol::Bytes bytes = ZSTD_isError(size) != 0
                                      ? writer->chunk(job.chunk, "", {})
                                      : writer->chunk(job.chunk, "zstd", protocol::ByteView(compressed).first(size));
    if (!append(bytes, job)) {
      job.lost += job.chunk.message_count();
      return;
    }
    ++chunks;
    retry_wait_ns = 0;
    job.messages += job.chunk.message_count();
    // On the disk before the next: a power cut loses at most the chunk being filled.
    ::fdatasync(fd);
  }

  void finish(Job& job) {
    if (fd < 0) return;
    const protocol::Bytes tail = writer->finish();
    if (!append(tail, job)) return;
    ::fdatasync(fd);
    ::close(fd);
    fd = -1;
    writer.reset();
    job.closed = path;
  }

  /// Removes the oldest recordings while all of them hold more than the total.
  void remove_oldest(Job& job) {
    struct Found {
      std::filesystem::path path;
      std::filesystem::file_time_type time;
      std::uintmax_t size;
    };
    std::vector<Found> found;
    std::error_code error;
    std::uintmax_t total = 0;
    for (const auto& entry : std::filesystem::directory_iterator(settings.directory, error)) {
      std::error_code e;
      if (!entry.is_regular_file(e) || entry.path().extension() != kExtension || entry.path() == path) continue;
      const auto size = entry.file_size(e);
      const auto time = entry.last_write_time(e);
      if (e) continue;
      found.push_back({entry.path(), time, size});
      total += size;
    }
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.time < b.time; });
    const std::uintmax_t limit = settings.total_mb * 1'000'000ULL;
    for (const Found& old : found) {
      if (total <= limit) break;
      std::error_code e;
      if (std::filesystem::remove(old.path, e)) {
        total -= old.size;
        job.removed.push_back(old.path.string());
      }
    }
  }
};

Recorder::Recorder(uv_loop_t* loop, Host& host) : loop_(loop), host_(host), worker_(std::make_shared<Worker>()) {
  if (const int rc = work_.init(loop_); rc < 0) status_.last_error = "recording: " + uv_error_text(rc);
}

// The work queue, last of the members to be made, goes first: a job still
// with the worker (a recording's last chunk and its end) is written then.
Recorder::~Recorder() = default;

protocol::Result<protocol::Done> Recorder::start(const RecordSettings& settings, RecordingIdentity identity,
                                                 std::string by) {
  if (status_.active) {
    return protocol::Error{"already recording (into " + status_.directory + ")", protocol::ErrorCode::Invalid};
  }
  std::error_code error;
  std::filesystem::create_directories(settings.directory, error);
  if (error || ::access(settings.directory.c_str(), W_OK) != 0) {
    const std::string why = error ? error.message() : errno_text(errno);
    return protocol::Error{
        "cannot record into " + settings.directory + " (record.directory): " + why + std::string(kChooseAFolder),
        protocol::ErrorCode::Invalid};
  }
  status_.active = true;
  status_.directory = settings.directory;
  status_.started_by = std::move(by);
  auto job = std::make_unique<Job>();
  job->kind = Job::Kind::Begin;
  job->settings = settings;
  job->identity = std::move(identity);
  enqueue(std::move(job));
  return protocol::Done{};
}

void Recorder::stop() {
  if (!status_.active) return;
  close_chunk();
  auto job = std::make_unique<Job>();
  job->kind = Job::Kind::Finish;
  enqueue(std::move(job));
  status_.active = false;
}

void Recorder::set_identity(RecordingIdentity identity) {
  if (!status_.active) return;
  auto job = std::make_unique<Job>();
  job->kind = Job::Kind::Identity;
  job->identity = std::move(identity);
  enqueue(std::move(job));
}

void Recorder::record(Topic topic, std::string_view json, std::uint64_t unix_ns) {
  if (!status_.active) return;
  if (!chunk_opened_) chunk_opened_ = steady_now();
  const auto id = static_cast<std::uint16_t>(topic);
  chunk_.add_message(id, sequence_[id]++, unix_ns, unix_ns, protocol::as_bytes(json));
  if (chunk_.size() >= kChunkSize) close_chunk();
}

void Recorder::housekeeping(SteadyTime now) {
  if (chunk_opened_ && now - *chunk_opened_ >= kChunkAge) close_chunk();
}

void Recorder::close_chunk() {
  chunk_opened_.reset();
  if (chunk_.empty()) return;
  auto job = std::make_unique<Job>();
  job->kind = Job::Kind::Chunk;
  job->chunk = std::move(chunk_);
  chunk_ = {};
  if (waiting_bytes_ + job->chunk.size() > kMaxWaiting) {
    // The disk is far behind: this chunk is lost, and counted; the rest go on.
    status_.dropped += job->chunk.message_count();
    if (dropped_since_note_ == 0) {
      host_.recording_note(true, "recording: the disk is not keeping up; messages are dropped until it does");
    }
    dropped_since_note_ += job->chunk.message_count();
    return;
  }
  enqueue(std::move(job));
}

void Recorder::enqueue(std::unique_ptr<Job> job) {
  waiting_bytes_ += job->chunk.size();
  waiting_.push_back(std::move(job));
  dispatch();
}

void Recorder::dispatch() {
  if (in_flight_ || waiting_.empty()) return;
  std::shared_ptr<Job> job(waiting_.front().release());
  waiting_.pop_front();
  waiting_bytes_ -= job->chunk.size();
  job->now_unix_ns = unix_ns_now();
  const bool taken = work_.submit(
      [worker = worker_, job] {
        switch (job->kind) {
          case Job::Kind::Begin:
            worker->settings = job->settings;
            worker->identity = job->identity;
            break;
          case Job::Kind::Identity:
            worker->identity = job->identity;
            break;
          case Job::Kind::Chunk:
            worker->write_chunk(*job);
            break;
          case Job::Kind::Finish:
            worker->finish(*job);
            break;
        }
      },
      [this, job] {
        in_flight_ = false;
        finished(*job);
        dispatch();
      });
  if (!taken) {
    status_.last_error = "recording: cannot start the thread that writes it";
    return;
  }
  in_flight_ = true;
}

void Recorder::finished(Job& job) {
  status_.bytes += job.bytes;
  status_.messages += job.messages;
  if (!job.removed.empty()) {
    status_.removed += job.removed.size();
    std::string names;
    for (const std::string& name : job.removed) names += (names.empty() ? "" : ", ") + name;
    host_.recording_note(false, "recording: removed the oldest recordings to keep within record.total_mb: " + names);
  }
  if (!job.opened.empty()) {
    ++status_.files;
    status_.file = job.opened;
    host_.recording_note(false, "recording into " + job.opened);
  }
  if (!job.closed.empty()) {
    if (status_.file == job.closed) status_.file.clear();
    if (job.error.empty()) host_.recording_note(false, "recording: " + job.closed + " is complete");
  }
  if (job.lost > 0) status_.dropped += job.lost;
  if (!job.error.empty()) {
    ++status_.write_errors;
    if (job.error != status_.last_error) {
      host_.recording_note(true,
                           "recording: " + job.error + "; the bridge goes on, and the next chunk tries a new file");
    }
    status_.last_error = job.error;
  } else if (job.kind == Job::Kind::Chunk && !status_.last_error.empty() && job.messages > 0) {
    host_.recording_note(false, "recording resumes into " + status_.file);
    status_.last_error.clear();
  }
  if (dropped_since_note_ > 0 && waiting_bytes_ < kMaxWaiting / 2 && job.kind == Job::Kind::Chunk) {
    host_.recording_note(
        true, "recording: " + std::to_string(dropped_since_note_) + " messages were dropped while the disk was behind");
    dropped_since_note_ = 0;
  }
}

}  // namespace flockbridge::bridge
