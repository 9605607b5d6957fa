// The run's recording: every message the bridge's JSON clients get (the
// robot's sensor messages, the link's, the lease's and the emergency
// stop's), what the family's own programs got, every command with who sent
// it and what the bridge answered, and the clients coming and going, in
// MCAP files (protocol/mcap) that
// Foxglove, Lichtblick and ROS 2's tools open.
//
// The loop only copies each message into the chunk being filled (a few
// hundred bytes, no system call). A chunk closes after a second or 256 KiB,
// and then everything slow happens on one of libuv's worker threads, one
// job at a time: zstd, the write, fdatasync, a new file when the current
// one is big or old enough, removing the oldest files past the total. So a
// slow or full disk never delays a client or the robot's link: chunks wait
// (up to kMaxWaiting bytes), then are dropped and counted; a failed write
// is cut off the file, which stays readable, and the next chunk starts a new
// file. A crash or power cut loses at most the chunk being filled and the
// one being written: the files are MCAP in order, readable without their
// footer.
#pragma once

#include <uv.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/bridge/work_queue.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/mcap/mcap.hpp"

namespace flockbridge::bridge {

/// The channels of a recording, one per kind of message; the topic names
/// are what a viewer shows.
enum class Topic : std::uint16_t {
  Sensor = 1,  ///< "/sensor": the robot's readings, as JSON clients get them
  Robot,       ///< "/robot": the robot's other messages
  Command,     ///< "/command": each robot command, who sent it, and whether it went
  Answer,      ///< "/answer": what the bridge answered each request
  Lease,       ///< "/lease": who drives
  Emergency,   ///< "/emergency": the latch, and safety stops
  Link,        ///< "/link": the robot link's state
  Client,      ///< "/client": clients connecting and leaving
  Hello,       ///< "/hello": the robot, its model and commands, first in each file
  Recording,   ///< "/recording": when the recording started and stopped, and by whom
  Native,      ///< "/native": the family's own stream, as its programs got it (what a replay serves them)
};
inline constexpr std::size_t kTopicCount = 11;

[[nodiscard]] std::string_view topic_name(Topic topic) noexcept;
/// The topic of that name; nothing for a name no topic has.
[[nodiscard]] std::optional<Topic> topic_named(std::string_view name) noexcept;
/// A JSON Schema (draft 2020-12) of an object: its title, its properties
/// (a JSON object's text) and its required ones (a JSON array's text, or "").
[[nodiscard]] std::string schema_text(std::string_view title, std::string_view properties,
                                      std::string_view required = "");
/// The name of a topic's schema: "flockbridge.link" for /link, and for
/// /sensor the family's ("flockbridge.FAMILY.sensor").
[[nodiscard]] std::string topic_schema_name(Topic topic, std::string_view family);
/// The JSON Schema of a topic's messages in a recording; for /sensor, whose
/// schema is the family's, a message with a type.
[[nodiscard]] std::string topic_schema(Topic topic);

/// What a recording says about its robot, in every file.
struct RecordingIdentity {
  std::string robot;   ///< the robot's name
  std::string family;  ///< the robot family, as the hello names it
  std::string model;
  std::string session;        ///< the bridge's session id
  std::string hello;          ///< the hello a JSON client gets (its JSON)
  std::string sensor_schema;  ///< the family's sensor message, as JSON Schema
  bool simulated = false;
};

/// What `stats` and the dashboard show.
struct RecordingStatus {
  bool active = false;
  std::string directory;
  std::string file;            ///< the file being written (its path); empty between files
  std::uint64_t files = 0;     ///< files begun since the bridge started
  std::uint64_t messages = 0;  ///< written to disk
  std::uint64_t bytes = 0;     ///< written to disk, compressed
  std::uint64_t dropped = 0;   ///< messages lost: the disk was too slow or refused them
  std::uint64_t write_errors = 0;
  std::uint64_t removed = 0;  ///< old files removed to keep within the total
  std::string last_error;
  std::string started_by;  ///< who started the current recording
};

class Recorder {
 public:
  /// The most the chunks waiting for the disk may hold, uncompressed.
  static constexpr std::size_t kMaxWaiting = 16U << 20U;
  /// A chunk closes after this long or this size, whichever first.
  static constexpr std::chrono::milliseconds kChunkAge{1000};
  static constexpr std::size_t kChunkSize = 256U << 10U;

  /// What the recorder tells its owner: a write that failed, files removed;
  /// the owner logs it (from the loop).
  class Host {
   public:
    Host() = default;
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;
    virtual ~Host() = default;
    virtual void recording_note(bool warning, const std::string& text) = 0;
  };

  Recorder(uv_loop_t* loop, Host& host);
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder();

  /// Starts recording into settings.directory (made if missing); the first
  /// file begins with the next chunk. An Error when it is recording already
  /// or the directory cannot be made.
  [[nodiscard]] protocol::Result<protocol::Done> start(const RecordSettings& settings, RecordingIdentity identity,
                                                       std::string by);
  /// Writes what is held and ends the file with its summary and footer.
  void stop();
  [[nodiscard]] bool active() const noexcept { return status_.active; }

  /// One message on a topic, at `unix_ns` (nanoseconds since the epoch).
  void record(Topic topic, std::string_view json, std::uint64_t unix_ns);
  /// Closes a chunk that is old enough (the bridge's housekeeping, 10 a second).
  void housekeeping(SteadyTime now);
  /// The robot is better known (its model, once it named it): the next
  /// file's metadata and hello say so.
  void set_identity(RecordingIdentity identity);

  [[nodiscard]] const RecordingStatus& status() const noexcept { return status_; }

  struct Worker;
  struct Job;

 private:
  void close_chunk();
  void enqueue(std::unique_ptr<Job> job);
  void dispatch();
  void finished(Job& job);

  uv_loop_t* loop_;
  Host& host_;
  RecordingStatus status_;
  /// The file's state: the worker thread's while a job runs, and a job
  /// runs only while no other does.
  std::shared_ptr<Worker> worker_;
  protocol::mcap::ChunkBuilder chunk_;
  std::array<std::uint32_t, kTopicCount + 1> sequence_{};
  std::optional<SteadyTime> chunk_opened_;
  std::deque<std::unique_ptr<Job>> waiting_;
  std::size_t waiting_bytes_ = 0;
  std::uint64_t dropped_since_note_ = 0;
  bool in_flight_ = false;  ///< a job is with the worker thread
  /// The worker thread: the file's writing, away from the loop.
  WorkQueue work_;
};

}  // namespace flockbridge::bridge
