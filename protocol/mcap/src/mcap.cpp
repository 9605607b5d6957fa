#include "flockbridge/protocol/mcap/mcap.hpp"

#include <algorithm>

#include "serial.hpp"

namespace flockbridge::protocol::mcap {

namespace {

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

void put_schema(Bytes& out, const Schema& schema) {
  Record record(out, Opcode::Schema);
  put_u16(out, schema.id);
  put_string(out, schema.name);
  put_string(out, schema.encoding);
  put_string(out, schema.data);
}

void put_channel(Bytes& out, const Channel& channel) {
  Record record(out, Opcode::Channel);
  put_u16(out, channel.id);
  put_u16(out, channel.schema_id);
  put_string(out, channel.topic);
  put_string(out, channel.message_encoding);
  put_string_map(out, channel.metadata);
}

}  // namespace

void Crc32::update(ByteView bytes) noexcept {
  std::uint32_t c = state_;
  for (const Byte b : bytes) c = kCrcTable[(c ^ b) & 0xFFU] ^ (c >> 8);
  state_ = c;
}

std::uint32_t crc32(ByteView bytes) noexcept {
  Crc32 crc;
  crc.update(bytes);
  return crc.value();
}

void ChunkBuilder::add_message(std::uint16_t channel, std::uint32_t sequence, std::uint64_t log_time,
                               std::uint64_t publish_time, ByteView data) {
  const std::uint64_t offset = records_.size();
  {
    Record record(records_, Opcode::Message);
    put_u16(records_, channel);
    put_u32(records_, sequence);
    put_u64(records_, log_time);
    put_u64(records_, publish_time);
    records_.insert(records_.end(), data.begin(), data.end());
  }
  index_[channel].emplace_back(log_time, offset);
  start_time_ = messages_ == 0 ? log_time : std::min(start_time_, log_time);
  end_time_ = std::max(end_time_, log_time);
  ++messages_;
}

void ChunkBuilder::clear() {
  records_.clear();
  index_.clear();
  messages_ = 0;
  start_time_ = 0;
  end_time_ = 0;
}

Writer::Writer(std::string profile, std::string library) : profile_(std::move(profile)), library_(std::move(library)) {}

Bytes Writer::handed_out(Bytes bytes) {
  offset_ += bytes.size();
  return bytes;
}

Bytes Writer::start() {
  Bytes out(kMagic.begin(), kMagic.end());
  {
    Record record(out, Opcode::Header);
    put_string(out, profile_);
    put_string(out, library_);
  }
  return handed_out(std::move(out));
}

Bytes Writer::schema(const Schema& schema) {
  Bytes out;
  put_schema(out, schema);
  schemas_.push_back(schema);
  return handed_out(std::move(out));
}

Bytes Writer::channel(const Channel& channel) {
  Bytes out;
  put_channel(out, channel);
  channels_.push_back(channel);
  return handed_out(std::move(out));
}

Bytes Writer::metadata(const Metadata& metadata) {
  Bytes out;
  {
    Record record(out, Opcode::Metadata);
    put_string(out, metadata.name);
    put_string_map(out, metadata.values);
  }
  metadata_indexes_.push_back({offset_, out.size(), metadata.name});
  return handed_out(std::move(out));
}

Bytes Writer::chunk(const ChunkBuilder& chunk, std::string_view compression, ByteView compressed) {
  const ByteView records = compression.empty() ? ByteView(chunk.records()) : compressed;
  Bytes out;
  out.reserve(kRecordPrefix + 64 + records.size() + chunk.index().size() * 64 + chunk.message_count() * 16);
  {
    Record record(out, Opcode::Chunk);
    put_u64(out, chunk.start_time());
    put_u64(out, chunk.end_time());
    put_u64(out, chunk.size());
    put_u32(out, crc32(chunk.records()));
    put_string(out, compression);
    put_u64(out, records.size());
    out.insert(out.end(), records.begin(), records.end());
  }
  ChunkIndex index{chunk.start_time(),       chunk.end_time(), offset_,     out.size(), {}, 0,
                   std::string(compression), records.size(),   chunk.size()};
  for (const auto& [channel, entries] : chunk.index()) {
    index.index_offsets[channel] = offset_ + out.size();
    const std::size_t begin = out.size();
    {
      Record record(out, Opcode::MessageIndex);
      put_u16(out, channel);
      put_u32(out, static_cast<std::uint32_t>(entries.size() * 16));
      for (const auto& [time, at] : entries) {
        put_u64(out, time);
        put_u64(out, at);
      }
    }
    index.index_length += out.size() - begin;
    channel_counts_[channel] += entries.size();
  }
  if (chunk.message_count() > 0) {
    start_time_ = message_count_ == 0 ? chunk.start_time() : std::min(start_time_, chunk.start_time());
    end_time_ = std::max(end_time_, chunk.end_time());
    message_count_ += chunk.message_count();
  }
  chunk_indexes_.push_back(std::move(index));
  return handed_out(std::move(out));
}

Bytes Writer::finish() {
  Bytes out;
  {
    Record record(out, Opcode::DataEnd);
    put_u32(out, 0);  // the data section's CRC: not kept (each chunk has its own)
  }
  const std::uint64_t summary_start = offset_ + out.size();
  struct Group {
    Opcode opcode;
    std::uint64_t start;
    std::uint64_t length;
  };
  std::vector<Group> groups;
  const auto group = [&](Opcode opcode, const auto& write) {
    const std::size_t begin = out.size();
    write();
    if (out.size() > begin) groups.push_back({opcode, offset_ + begin, out.size() - begin});
  };
  group(Opcode::Schema, [&] {
    for (const Schema& schema : schemas_) put_schema(out, schema);
  });
  group(Opcode::Channel, [&] {
    for (const Channel& channel : channels_) put_channel(out, channel);
  });
  group(Opcode::Statistics, [&] {
    Record record(out, Opcode::Statistics);
    put_u64(out, message_count_);
    put_u16(out, static_cast<std::uint16_t>(schemas_.size()));
    put_u32(out, static_cast<std::uint32_t>(channels_.size()));
    put_u32(out, 0);  // attachments
    put_u32(out, static_cast<std::uint32_t>(metadata_indexes_.size()));
    put_u32(out, static_cast<std::uint32_t>(chunk_indexes_.size()));
    put_u64(out, start_time_);
    put_u64(out, end_time_);
    put_u32(out, static_cast<std::uint32_t>(channel_counts_.size() * 10));
    for (const auto& [channel, count] : channel_counts_) {
      put_u16(out, channel);
      put_u64(out, count);
    }
  });
  group(Opcode::ChunkIndex, [&] {
    for (const ChunkIndex& index : chunk_indexes_) {
      Record record(out, Opcode::ChunkIndex);
      put_u64(out, index.start_time);
      put_u64(out, index.end_time);
      put_u64(out, index.offset);
      put_u64(out, index.length);
      put_u32(out, static_cast<std::uint32_t>(index.index_offsets.size() * 10));
      for (const auto& [channel, at] : index.index_offsets) {
        put_u16(out, channel);
        put_u64(out, at);
      }
      put_u64(out, index.index_length);
      put_string(out, index.compression);
      put_u64(out, index.compressed_size);
      put_u64(out, index.uncompressed_size);
    }
  });
  group(Opcode::MetadataIndex, [&] {
    for (const MetadataIndex& index : metadata_indexes_) {
      Record record(out, Opcode::MetadataIndex);
      put_u64(out, index.offset);
      put_u64(out, index.length);
      put_string(out, index.name);
    }
  });
  const std::uint64_t summary_offset_start = offset_ + out.size();
  for (const Group& g : groups) {
    Record record(out, Opcode::SummaryOffset);
    out.push_back(static_cast<Byte>(g.opcode));
    put_u64(out, g.start);
    put_u64(out, g.length);
  }
  const std::size_t crc_from = static_cast<std::size_t>(summary_start - offset_);
  out.push_back(static_cast<Byte>(Opcode::Footer));
  put_u64(out, 20);
  put_u64(out, summary_start);
  put_u64(out, summary_offset_start);
  put_u32(out, crc32(ByteView(out).subspan(crc_from)));
  out.insert(out.end(), kMagic.begin(), kMagic.end());
  return handed_out(std::move(out));
}

}  // namespace flockbridge::protocol::mcap
