// MCAP, version 0 (mcap.dev/spec): the container flockbridge records its
// runs in, which ROS 2 records by default and Foxglove and Lichtblick open.
//
// A file is the magic, a Header record, the data section (here: Schema and
// Channel records, a Metadata record, then Chunks, each followed by one
// Message Index record per channel it holds), a Data End record, the summary
// (the schemas and channels again, Statistics, a Chunk Index per chunk, a
// Metadata Index), one Summary Offset record per summary group, the Footer
// and the magic again. Every record is an opcode byte, a little-endian u64
// length and its fields; strings and byte arrays carry a u32 length (a
// chunk's records a u64). A reader that finds the footer seeks through the
// summary; one that does not (the writer was killed) reads the records in
// order, and every chunk written whole is still there.
//
// The writer hands out the bytes of each part in the order they go into the
// file and keeps the offsets the summary needs; it compresses nothing
// itself (the caller compresses a chunk's records and says how).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::mcap {

inline constexpr std::array<Byte, 8> kMagic{0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

enum class Opcode : Byte {
  Header = 0x01,
  Footer = 0x02,
  Schema = 0x03,
  Channel = 0x04,
  Message = 0x05,
  Chunk = 0x06,
  MessageIndex = 0x07,
  ChunkIndex = 0x08,
  Attachment = 0x09,
  AttachmentIndex = 0x0A,
  Statistics = 0x0B,
  Metadata = 0x0C,
  MetadataIndex = 0x0D,
  SummaryOffset = 0x0E,
  DataEnd = 0x0F,
};

/// An opcode byte and a u64 length come before every record's fields.
inline constexpr std::size_t kRecordPrefix = 9;

/// CRC-32 as zlib computes it (IEEE 802.3, reflected, the one MCAP names),
/// over bytes given in as many pieces as wanted.
class Crc32 {
 public:
  void update(ByteView bytes) noexcept;
  [[nodiscard]] std::uint32_t value() const noexcept { return ~state_; }

 private:
  std::uint32_t state_ = 0xFFFFFFFFU;
};

[[nodiscard]] std::uint32_t crc32(ByteView bytes) noexcept;

using StringMap = std::map<std::string, std::string>;

/// How the messages of channels that name it are written. `encoding`
/// "jsonschema" for a JSON Schema in `data`; an empty one for none.
struct Schema {
  std::uint16_t id = 0;  ///< never 0
  std::string name;
  std::string encoding;
  std::string data;
  bool operator==(const Schema&) const = default;
};

struct Channel {
  std::uint16_t id = 0;
  std::uint16_t schema_id = 0;  ///< 0: no schema
  std::string topic;
  std::string message_encoding;  ///< "json" for JSON text
  StringMap metadata;
  bool operator==(const Channel&) const = default;
};

/// A message as a reader gives it back.
struct Message {
  std::uint16_t channel_id = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;  ///< nanoseconds since the Unix epoch
  std::uint64_t publish_time = 0;
  std::string data;
};

struct Metadata {
  std::string name;
  StringMap values;
};

/// The records of one chunk, uncompressed, as they are added, with what the
/// chunk's indexes need: each channel's messages' times and offsets.
class ChunkBuilder {
 public:
  void add_message(std::uint16_t channel, std::uint32_t sequence, std::uint64_t log_time, std::uint64_t publish_time,
                   ByteView data);

  [[nodiscard]] bool empty() const noexcept { return records_.empty(); }
  /// The records' size, uncompressed.
  [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
  [[nodiscard]] std::uint64_t message_count() const noexcept { return messages_; }
  [[nodiscard]] const Bytes& records() const noexcept { return records_; }
  [[nodiscard]] std::uint64_t start_time() const noexcept { return start_time_; }
  [[nodiscard]] std::uint64_t end_time() const noexcept { return end_time_; }
  /// Per channel, each message's log time and offset in the records.
  [[nodiscard]] const std::map<std::uint16_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>>& index()
      const noexcept {
    return index_;
  }
  void clear();

 private:
  Bytes records_;
  std::map<std::uint16_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> index_;
  std::uint64_t messages_ = 0;
  std::uint64_t start_time_ = 0;
  std::uint64_t end_time_ = 0;
};

/// One file's bytes, part by part, in the order they go into the file: the
/// caller writes each part as it comes and the writer keeps the offsets and
/// counts the summary needs.
class Writer {
 public:
  /// `library`: the writer's name and version, for people debugging a file.
  Writer(std::string profile, std::string library);

  /// The magic and the Header record: the first bytes of the file.
  [[nodiscard]] Bytes start();
  /// A schema and a channel in the data section, before any message names them.
  [[nodiscard]] Bytes schema(const Schema& schema);
  [[nodiscard]] Bytes channel(const Channel& channel);
  [[nodiscard]] Bytes metadata(const Metadata& metadata);
  /// A Chunk record and its Message Index records. `compressed`: the
  /// chunk's records compressed as `compression` names ("zstd"), or the
  /// records themselves when it is empty.
  [[nodiscard]] Bytes chunk(const ChunkBuilder& chunk, std::string_view compression, ByteView compressed);
  /// Data End, the summary, the summary offsets, the Footer and the magic:
  /// the last bytes of the file.
  [[nodiscard]] Bytes finish();

  /// How many bytes the parts handed out so far hold.
  [[nodiscard]] std::uint64_t size() const noexcept { return offset_; }
  [[nodiscard]] std::uint64_t message_count() const noexcept { return message_count_; }
  [[nodiscard]] std::uint64_t chunk_count() const noexcept { return chunk_indexes_.size(); }

 private:
  struct ChunkIndex {
    std::uint64_t start_time = 0;
    std::uint64_t end_time = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::map<std::uint16_t, std::uint64_t> index_offsets;
    std::uint64_t index_length = 0;
    std::string compression;
    std::uint64_t compressed_size = 0;
    std::uint64_t uncompressed_size = 0;
  };
  struct MetadataIndex {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::string name;
  };
  Bytes handed_out(Bytes bytes);

  std::string profile_;
  std::string library_;
  std::uint64_t offset_ = 0;
  std::vector<Schema> schemas_;
  std::vector<Channel> channels_;
  std::vector<ChunkIndex> chunk_indexes_;
  std::vector<MetadataIndex> metadata_indexes_;
  std::map<std::uint16_t, std::uint64_t> channel_counts_;
  std::uint64_t message_count_ = 0;
  std::uint64_t start_time_ = 0;
  std::uint64_t end_time_ = 0;
};

}  // namespace flockbridge::protocol::mcap
