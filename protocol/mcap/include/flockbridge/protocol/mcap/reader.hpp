// Reads an MCAP file in order, from bytes fed in pieces of any size (a
// file being read, or one still being written): schemas, channels,
// metadata and messages come out as their records are read whole, a chunk's
// messages once the whole chunk is in. It needs no footer, so the file of a
// writer killed mid-chunk gives every chunk before the broken one (state()
// stays Reading: the rest never came). What does not follow the format
// ends the reading with an error that says where; nothing in the input can
// make it take more memory than its limits.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/mcap/mcap.hpp"

namespace flockbridge::protocol::mcap {

/// Turns a chunk's compressed records back into `uncompressed_size` bytes;
/// an Error when `compression` is not one it knows or the data is damaged.
using Decompress =
    std::function<Result<Bytes>(std::string_view compression, ByteView compressed, std::uint64_t uncompressed_size)>;

struct ReaderLimits {
  /// The longest record taken (a chunk, compressed), and the most a chunk
  /// may hold uncompressed. A recording's chunks are far smaller.
  std::uint64_t max_record = 64ULL << 20;
  std::uint64_t max_chunk = 256ULL << 20;
};

struct Header {
  std::string profile;
  std::string library;
};

/// What the reader gives back, in file order.
using Item = std::variant<Header, Schema, Channel, Metadata, Message>;

class Reader {
 public:
  enum class State : std::uint8_t {
    Reading,  ///< wants more bytes (a file cut short stays here)
    Ended,    ///< the footer and the closing magic were read
    Failed,   ///< not an MCAP file, or broken where error() says
  };

  explicit Reader(Decompress decompress, ReaderLimits limits = {});

  void feed(ByteView bytes);
  /// The next item, or nothing until more bytes come (or the reading has
  /// ended or failed: state()).
  [[nodiscard]] std::optional<Item> next();

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// The file's offset of the first byte not yet read as part of a whole record.
  [[nodiscard]] std::uint64_t offset() const noexcept { return consumed_; }
  /// Every schema and channel read so far, by id.
  [[nodiscard]] const std::map<std::uint16_t, Schema>& schemas() const noexcept { return schemas_; }
  [[nodiscard]] const std::map<std::uint16_t, Channel>& channels() const noexcept { return channels_; }

 private:
  /// One whole record at the front of the input, or nothing yet.
  bool take_record();
  /// Handles one record's fields (from the file, or from inside a chunk).
  void record(Opcode opcode, ByteView fields, bool in_chunk);
  void chunk(ByteView fields);
  void fail(std::string why);

  Decompress decompress_;
  ReaderLimits limits_;
  Bytes input_;
  std::size_t read_at_ = 0;  ///< in input_
  std::uint64_t consumed_ = 0;
  bool magic_read_ = false;
  bool data_ended_ = false;  ///< after Data End only the summary and footer follow
  bool footer_read_ = false;
  State state_ = State::Reading;
  std::string error_;
  std::deque<Item> ready_;
  std::map<std::uint16_t, Schema> schemas_;
  std::map<std::uint16_t, Channel> channels_;
};

/// A whole file's items at once (a test's, a small file's).
struct Recording {
  std::optional<Header> header;
  std::map<std::uint16_t, Schema> schemas;
  std::map<std::uint16_t, Channel> channels;
  std::vector<Metadata> metadata;
  std::vector<Message> messages;
  Reader::State state = Reader::State::Reading;
  std::string error;
};
[[nodiscard]] Recording read_all(ByteView file, const Decompress& decompress, ReaderLimits limits = {});

}  // namespace flockbridge::protocol::mcap
