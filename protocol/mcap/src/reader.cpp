#include "flockbridge/protocol/mcap/reader.hpp"

#include <algorithm>

#include "serial.hpp"

namespace flockbridge::protocol::mcap {

namespace {

std::string opcode_name(Opcode opcode) {
  switch (opcode) {
    case Opcode::Header:
      return "Header";
    case Opcode::Footer:
      return "Footer";
    case Opcode::Schema:
      return "Schema";
    case Opcode::Channel:
      return "Channel";
    case Opcode::Message:
      return "Message";
    case Opcode::Chunk:
      return "Chunk";
    case Opcode::MessageIndex:
      return "Message Index";
    case Opcode::ChunkIndex:
      return "Chunk Index";
    case Opcode::Attachment:
      return "Attachment";
    case Opcode::AttachmentIndex:
      return "Attachment Index";
    case Opcode::Statistics:
      return "Statistics";
    case Opcode::Metadata:
      return "Metadata";
    case Opcode::MetadataIndex:
      return "Metadata Index";
    case Opcode::SummaryOffset:
      return "Summary Offset";
    case Opcode::DataEnd:
      return "Data End";
  }
  return "0x" + std::to_string(static_cast<int>(opcode));
}

std::optional<Schema> parse_schema(Cursor& in) {
  Schema schema;
  const auto id = in.le<std::uint16_t>();
  auto name = in.string();
  auto encoding = in.string();
  auto data = in.string();
  if (!id || !name || !encoding || !data) return std::nullopt;
  return Schema{*id, std::move(*name), std::move(*encoding), std::move(*data)};
}

std::optional<Channel> parse_channel(Cursor& in) {
  const auto id = in.le<std::uint16_t>();
  const auto schema_id = in.le<std::uint16_t>();
  auto topic = in.string();
  auto encoding = in.string();
  auto metadata = in.string_map();
  if (!id || !schema_id || !topic || !encoding || !metadata) return std::nullopt;
  return Channel{*id, *schema_id, std::move(*topic), std::move(*encoding), std::move(*metadata)};
}

}  // namespace

Reader::Reader(Decompress decompress, ReaderLimits limits) : decompress_(std::move(decompress)), limits_(limits) {}

void Reader::feed(ByteView bytes) {
  if (state_ != State::Reading) return;
  // What has been read goes, once it is the larger part of the buffer.
  if (read_at_ > 0 && read_at_ >= input_.size() / 2) {
    input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(read_at_));
    read_at_ = 0;
  }
  input_.insert(input_.end(), bytes.begin(), bytes.end());
}

std::optional<Item> Reader::next() {
  while (ready_.empty() && state_ == State::Reading && take_record()) {
  }
  if (ready_.empty()) return std::nullopt;
  Item item = std::move(ready_.front());
  ready_.pop_front();
  return item;
}

void Reader::fail(std::string why) {
  if (state_ != State::Reading) return;
  state_ = State::Failed;
  error_ = std::move(why);
}

bool Reader::take_record() {
  const ByteView input = ByteView(input_).subspan(read_at_);
  const auto consume = [&](std::size_t count) {
    read_at_ += count;
    consumed_ += count;
  };
  if (!magic_read_ || footer_read_) {
    if (input.size() < kMagic.size()) return false;
    if (!std::equal(kMagic.begin(), kMagic.end(), input.begin())) {
      fail(magic_read_ ? "the file does not end with MCAP's magic bytes after its footer"
                       : "not an MCAP file: it does not begin with MCAP's magic bytes");
      return false;
    }
    consume(kMagic.size());
    if (footer_read_) {
      state_ = State::Ended;
      return false;
    }
    magic_read_ = true;
    return true;
  }
  if (input.size() < kRecordPrefix) return false;
  const auto opcode = static_cast<Opcode>(input[0]);
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(input[1 + i]) << (8 * i);
  if (length > limits_.max_record) {
    fail("a " + opcode_name(opcode) + " record at offset " + std::to_string(consumed_) + " claims " +
         std::to_string(length) + " bytes, more than the " + std::to_string(limits_.max_record) + " a record may have");
    return false;
  }
  if (input.size() - kRecordPrefix < length) return false;
  const std::uint64_t at = consumed_;
  consume(kRecordPrefix + static_cast<std::size_t>(length));
  record(opcode, input.subspan(kRecordPrefix, static_cast<std::size_t>(length)), false);
  if (state_ == State::Failed) error_ += " (the record at offset " + std::to_string(at) + ")";
  return state_ == State::Reading;
}

void Reader::record(Opcode opcode, ByteView fields, bool in_chunk) {
  Cursor in(fields);
  const auto short_fields = [&] { fail("a " + opcode_name(opcode) + " record is shorter than its fields"); };
  switch (opcode) {
    case Opcode::Header: {
      auto profile = in.string();
      auto library = in.string();
      if (!profile || !library) return short_fields();
      ready_.emplace_back(Header{std::move(*profile), std::move(*library)});
      return;
    }
    case Opcode::Footer:
      if (!in_chunk) footer_read_ = true;
      return;
    case Opcode::DataEnd:
      if (!in_chunk) data_ended_ = true;
      return;
    case Opcode::Schema: {
      auto schema = parse_schema(in);
      if (!schema) return short_fields();
      // Id 0 is no schema; the summary's copies were given already.
      if (schema->id == 0 || data_ended_) return;
      const auto [known, added] = schemas_.try_emplace(schema->id, *schema);
      if (added) {
        ready_.emplace_back(std::move(*schema));
      } else if (!(known->second == *schema)) {
        fail("two Schema records with id " + std::to_string(schema->id) + " differ");
      }
      return;
    }
    case Opcode::Channel: {
      auto channel = parse_channel(in);
      if (!channel) return short_fields();
      if (data_ended_) return;
      if (channel->schema_id != 0 && !schemas_.contains(channel->schema_id)) {
        return fail("channel " + std::to_string(channel->id) + " names schema " + std::to_string(channel->schema_id) +
                    ", which no Schema record gave before it");
      }
      const auto [known, added] = channels_.try_emplace(channel->id, *channel);
      if (added) {
        ready_.emplace_back(std::move(*channel));
      } else if (!(known->second == *channel)) {
        fail("two Channel records with id " + std::to_string(channel->id) + " differ");
      }
      return;
    }
    case Opcode::Message: {
      const auto channel = in.le<std::uint16_t>();
      const auto sequence = in.le<std::uint32_t>();
      const auto log_time = in.le<std::uint64_t>();
      const auto publish_time = in.le<std::uint64_t>();
      if (!channel || !sequence || !log_time || !publish_time) return short_fields();
      if (!channels_.contains(*channel)) {
        return fail("a message on channel " + std::to_string(*channel) + ", which no Channel record gave before it");
      }
      const ByteView data = in.rest();
      ready_.emplace_back(
          Message{*channel, *sequence, *log_time, *publish_time, std::string(data.begin(), data.end())});
      return;
    }
    case Opcode::Chunk:
      if (in_chunk) return fail("a chunk inside a chunk");
      if (!data_ended_) chunk(fields);
      return;
    case Opcode::Metadata: {
      auto name = in.string();
      auto values = in.string_map();
      if (!name || !values) return short_fields();
      if (!data_ended_) ready_.emplace_back(Metadata{std::move(*name), std::move(*values)});
      return;
    }
    default:
      // Indexes, statistics, attachments, and opcodes of later versions or
      // of applications: a reader in order has no use for them.
      return;
  }
}

void Reader::chunk(ByteView fields) {
  Cursor in(fields);
  const auto start = in.le<std::uint64_t>();
  const auto end = in.le<std::uint64_t>();
  const auto size = in.le<std::uint64_t>();
  const auto crc = in.le<std::uint32_t>();
  const auto compression = in.string();
  const auto length = in.le<std::uint64_t>();
  if (!start || !end || !size || !crc || !compression || !length)
    return fail("a Chunk record is shorter than its fields");
  const auto stored = in.bytes(*length);
  if (!stored) return fail("a Chunk record is shorter than its records");
  if (*size > limits_.max_chunk) {
    return fail("a chunk holds " + std::to_string(*size) + " bytes uncompressed, more than the " +
                std::to_string(limits_.max_chunk) + " a chunk may");
  }
  Bytes expanded;
  ByteView records = *stored;
  if (!compression->empty()) {
    if (!decompress_) return fail("a chunk is compressed with " + *compression + ", and no decompressor was given");
    auto result = decompress_(*compression, *stored, *size);
    if (!result) return fail("a chunk's records do not decompress: " + result.error().message);
    expanded = std::move(result).value();
    records = expanded;
  }
  if (records.size() != *size) {
    return fail("a chunk's records are " + std::to_string(records.size()) + " bytes, and its header says " +
                std::to_string(*size));
  }
  if (*crc != 0 && crc32(records) != *crc) return fail("a chunk's records do not match their CRC");
  Cursor inner(records);
  while (!inner.at_end() && state_ == State::Reading) {
    const auto opcode = inner.le<std::uint8_t>();
    const auto record_length = inner.le<std::uint64_t>();
    if (!opcode || !record_length) return fail("a chunk ends in the middle of a record's prefix");
    const auto record_fields = inner.bytes(*record_length);
    if (!record_fields) return fail("a chunk ends in the middle of a record");
    record(static_cast<Opcode>(*opcode), *record_fields, true);
  }
}

Recording read_all(ByteView file, const Decompress& decompress, ReaderLimits limits) {
  Reader reader(decompress, limits);
  reader.feed(file);
  Recording out;
  while (auto item = reader.next()) {
    std::visit(
        [&](auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, Header>) {
            out.header = std::move(value);
          } else if constexpr (std::is_same_v<T, Schema>) {
            out.schemas[value.id] = std::move(value);
          } else if constexpr (std::is_same_v<T, Channel>) {
            out.channels[value.id] = std::move(value);
          } else if constexpr (std::is_same_v<T, Metadata>) {
            out.metadata.push_back(std::move(value));
          } else {
            out.messages.push_back(std::move(value));
          }
        },
        *item);
  }
  out.state = reader.state();
  out.error = reader.error();
  return out;
}

}  // namespace flockbridge::protocol::mcap
