// The MCAP writer and reader against each other and against the bytes the
// specification (mcap.dev/spec) lays down: the magic, the records' layout,
// the footer's offsets and CRC, the summary's groups; a file cut at every
// byte still gives every whole chunk before the cut; what is not MCAP is
// refused with a reason. The real readers (@mcap/core) read the bridge's
// files in tests/browser/recording.test.mjs.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "flockbridge/protocol/mcap/mcap.hpp"
#include "flockbridge/protocol/mcap/reader.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::mcap;

namespace {

std::uint64_t u64_at(const Bytes& bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value |= static_cast<std::uint64_t>(bytes.at(at + i)) << (8 * i);
  return value;
}
std::uint32_t u32_at(const Bytes& bytes, std::size_t at) {
  return static_cast<std::uint32_t>(u64_at(bytes, at) & 0xFFFFFFFFU);
}

/// A stand-in compression the test can undo: the records reversed.
constexpr std::string_view kReversed = "x-reversed";
Bytes reversed(ByteView bytes) {
  return {bytes.rbegin(), bytes.rend()};
}
Result<Bytes> decompress(std::string_view compression, ByteView data, std::uint64_t /*size*/) {
  if (compression != kReversed) return Error{"unknown compression " + std::string(compression)};
  return reversed(data);
}

struct Built {
  Bytes file;
  std::vector<std::size_t> chunk_ends;  ///< where each chunk's index records end
  std::size_t data_end = 0;             ///< where the Data End record begins
};

Built build(bool compress) {
  Built out;
  Writer writer("", "flockbridge test");
  const auto add = [&](Bytes bytes) { out.file.insert(out.file.end(), bytes.begin(), bytes.end()); };
  add(writer.start());
  add(writer.schema({1, "flockbridge.Sensor", "jsonschema", R"({"type":"object"})"}));
  add(writer.channel({1, 1, "/sensor", "json", {{"robot", "flockbot"}}}));
  add(writer.channel({2, 0, "/events", "json", {}}));
  add(writer.metadata({"flockbridge", {{"robot", "flockbot"}, {"session", "0123"}}}));
  ChunkBuilder chunk;
  std::uint32_t sequence = 0;
  for (int c = 0; c < 3; ++c) {
    for (int m = 0; m < 5; ++m) {
      const std::string text = R"({"seq":)" + std::to_string(sequence) + "}";
      const std::uint64_t time = 1'000'000'000ULL * 1700000000ULL + sequence * 10'000'000ULL;
      chunk.add_message(m == 4 ? 2 : 1, sequence, time, time, as_bytes(text));
      ++sequence;
    }
    add(compress ? writer.chunk(chunk, kReversed, reversed(chunk.records())) : writer.chunk(chunk, "", {}));
    out.chunk_ends.push_back(out.file.size());
    chunk.clear();
  }
  out.data_end = out.file.size();
  add(writer.finish());
  CHECK(writer.size() == out.file.size());
  CHECK(writer.message_count() == 15);
  CHECK(writer.chunk_count() == 3);
  return out;
}

}  // namespace

TEST_CASE("mcap: CRC-32 is zlib's (the check value of 123456789), in pieces as whole") {
  CHECK(crc32(as_bytes("123456789")) == 0xCBF43926U);
  Crc32 pieces;
  pieces.update(as_bytes("1234"));
  pieces.update(as_bytes("56789"));
  CHECK(pieces.value() == 0xCBF43926U);
  CHECK(crc32({}) == 0);
}

TEST_CASE("mcap: a file begins and ends with the magic, its footer points at a summary whose CRC it holds") {
  const Built built = build(false);
  const Bytes& file = built.file;
  REQUIRE(file.size() > 100);
  CHECK(std::equal(kMagic.begin(), kMagic.end(), file.begin()));
  CHECK(std::equal(kMagic.begin(), kMagic.end(), file.end() - 8));
  // The header: opcode 1, its length, profile "" and library.
  CHECK(file[8] == 0x01);
  CHECK(u64_at(file, 9) == 4 + 4 + std::string("flockbridge test").size());
  // The footer: opcode 2, length 20, summary start, summary offset start, CRC.
  const std::size_t footer = file.size() - 8 - 29;
  CHECK(file[footer] == 0x02);
  CHECK(u64_at(file, footer + 1) == 20);
  const std::uint64_t summary_start = u64_at(file, footer + 9);
  const std::uint64_t offsets_start = u64_at(file, footer + 17);
  CHECK(file.at(built.data_end) == 0x0F);  // Data End, then the summary
  CHECK(summary_start == built.data_end + 9 + 4);
  CHECK(file.at(summary_start) == 0x03);  // the schemas first
  CHECK(u32_at(file, footer + 25) == crc32(ByteView(file).subspan(summary_start, footer + 25 - summary_start)));
  // One summary offset per group: schemas, channels, statistics, chunk indexes, metadata index.
  std::vector<int> groups;
  for (std::size_t at = offsets_start; at < footer; at += 9 + 17) {
    REQUIRE(file.at(at) == 0x0E);
    groups.push_back(file.at(at + 9));
    const std::uint64_t start = u64_at(file, at + 10);
    CHECK(file.at(start) == file.at(at + 9));  // each points at a record of its group
  }
  CHECK(groups == std::vector<int>{0x03, 0x04, 0x0B, 0x08, 0x0D});
  // Each chunk index points at its chunk.
  Reader reader(decompress);
  reader.feed(file);
  while (reader.next()) {
  }
  CHECK(reader.state() == Reader::State::Ended);
  CHECK(reader.offset() == file.size());
}

TEST_CASE("mcap: what is written reads back: header, schema, channels, metadata, every message in order") {
  for (const bool compress : {false, true}) {
    CAPTURE(compress);
    const Built built = build(compress);
    const Recording read = read_all(built.file, decompress);
    CHECK(read.state == Reader::State::Ended);
    CHECK(read.error.empty());
    REQUIRE(read.header);
    CHECK(read.header->library == "flockbridge test");
    REQUIRE(read.schemas.size() == 1);
    CHECK(read.schemas.at(1).encoding == "jsonschema");
    REQUIRE(read.channels.size() == 2);
    CHECK(read.channels.at(1).topic == "/sensor");
    CHECK(read.channels.at(1).metadata.at("robot") == "flockbot");
    REQUIRE(read.metadata.size() == 1);
    CHECK(read.metadata[0].values.at("session") == "0123");
    REQUIRE(read.messages.size() == 15);
    for (std::uint32_t i = 0; i < 15; ++i) {
      CHECK(read.messages[i].sequence == i);
      CHECK(read.messages[i].data == R"({"seq":)" + std::to_string(i) + "}");
      CHECK(read.messages[i].channel_id == (i % 5 == 4 ? 2 : 1));
      CHECK(read.messages[i].log_time == 1'000'000'000ULL * 1700000000ULL + i * 10'000'000ULL);
    }
  }
}

TEST_CASE("mcap: a file cut at any byte gives every chunk written whole before the cut, and no error") {
  const Built built = build(true);
  for (std::size_t cut = 0; cut < built.file.size(); ++cut) {
    CAPTURE(cut);
    const Recording read = read_all(ByteView(built.file).first(cut), decompress);
    REQUIRE(read.state == Reader::State::Reading);
    const auto whole = static_cast<std::size_t>(
        std::count_if(built.chunk_ends.begin(), built.chunk_ends.end(), [&](std::size_t end) { return end <= cut; }));
    // A chunk counts once its record is in (its index records may still be missing).
    CHECK(read.messages.size() >= 5 * (whole));
    CHECK(read.messages.size() <= 5 * (whole + 1));
    CHECK(read.messages.size() % 5 == 0);
  }
}

TEST_CASE("mcap: bytes fed one at a time read as the whole file does") {
  const Built built = build(true);
  Reader reader(decompress);
  std::size_t messages = 0;
  for (const Byte b : built.file) {
    reader.feed(ByteView(&b, 1));
    while (auto item = reader.next()) messages += std::holds_alternative<Message>(*item) ? 1U : 0U;
  }
  CHECK(messages == 15);
  CHECK(reader.state() == Reader::State::Ended);
}

TEST_CASE("mcap: what is not MCAP, or is broken, ends the reading with a reason") {
  const Built built = build(true);
  struct Case {
    std::string what;
    Bytes bytes;
    std::string reason;
    ReaderLimits limits{};
  };
  std::vector<Case> cases;
  cases.push_back({"not MCAP",
                   Bytes(as_bytes("{\"type\":\"hello\"}\n").begin(), as_bytes("{\"type\":\"hello\"}\n").end()),
                   "not an MCAP file"});
  {
    Bytes crc = built.file;
    // A byte inside the first chunk's (reversed) records.
    crc[built.chunk_ends[0] - 200] ^= 0x01U;
    cases.push_back({"a chunk's CRC", crc, "do not match their CRC"});
  }
  cases.push_back({"a record too long", built.file, "more than the 64 a record may have", ReaderLimits{64, 1U << 20U}});
  cases.push_back({"a chunk too big", built.file, "a chunk may", ReaderLimits{1U << 20U, 16}});
  {
    // The message channel unknown: the channel records renumbered.
    Writer writer("", "");
    Bytes file = writer.start();
    ChunkBuilder chunk;
    chunk.add_message(7, 0, 1, 1, as_bytes("{}"));
    const Bytes bytes = writer.chunk(chunk, "", {});
    file.insert(file.end(), bytes.begin(), bytes.end());
    cases.push_back({"a message on no channel", file, "which no Channel record gave before it"});
  }
  {
    Writer writer("", "");
    Bytes file = writer.start();
    ChunkBuilder chunk;
    chunk.add_message(1, 0, 1, 1, as_bytes("{}"));
    const Bytes bytes = writer.chunk(chunk, "lz4", chunk.records());
    file.insert(file.end(), bytes.begin(), bytes.end());
    cases.push_back({"a compression the caller does not know", file, "unknown compression lz4"});
  }
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Recording read = read_all(c.bytes, decompress, c.limits);
    CHECK(read.state == Reader::State::Failed);
    CAPTURE(read.error);
    CHECK(read.error.find(c.reason) != std::string::npos);
  }
}
