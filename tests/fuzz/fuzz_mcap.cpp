// libFuzzer: the MCAP reader (what --replay opens) fed any bytes, whole and
// in pieces whose sizes come from the input itself: it must never read out
// of bounds or take more than its limits, and both ways must give the same
// items and end in the same state. The same bytes, cut into messages, are
// written as a file and must read back exactly, cut anywhere short of the
// end as every whole chunk before the cut.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flockbridge/protocol/mcap/mcap.hpp"
#include "flockbridge/protocol/mcap/reader.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::mcap;

namespace {

/// A compression the fuzzer can reach: "x" is the records reversed.
Result<Bytes> decompress(std::string_view compression, ByteView data, std::uint64_t /*size*/) {
  if (compression != "x") return Error{"unknown compression"};
  return Bytes(data.rbegin(), data.rend());
}

constexpr ReaderLimits kLimits{1U << 16U, 1U << 18U};

std::size_t count_items(Reader& reader, std::vector<std::string>& seen) {
  std::size_t count = 0;
  while (auto item = reader.next()) {
    ++count;
    if (const auto* message = std::get_if<Message>(&*item)) seen.push_back(message->data);
  }
  return count;
}

void trap_unless(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView input(data, size);
  std::vector<std::string> whole_messages;
  Reader whole(decompress, kLimits);
  whole.feed(input);
  const std::size_t whole_items = count_items(whole, whole_messages);

  std::vector<std::string> piece_messages;
  Reader pieces(decompress, kLimits);
  std::size_t piece_items = 0;
  for (std::size_t at = 0; at < size;) {
    const std::size_t length = std::min<std::size_t>(size - at, 1U + data[at] % 64U);
    pieces.feed(input.subspan(at, length));
    piece_items += count_items(pieces, piece_messages);
    at += length;
  }
  trap_unless(whole_items == piece_items);
  trap_unless(whole_messages == piece_messages);
  trap_unless(whole.state() == pieces.state());

  // The input as messages of a file, a chunk every 7.
  Writer writer("", "fuzz");
  Bytes file = writer.start();
  const auto add = [&](const Bytes& bytes) { file.insert(file.end(), bytes.begin(), bytes.end()); };
  add(writer.channel({1, 0, "/fuzz", "json", {}}));
  ChunkBuilder chunk;
  std::vector<std::string> written;
  for (std::size_t at = 0; at < size;) {
    const std::size_t length = std::min<std::size_t>(size - at, data[at] % 32U);
    const ByteView piece = input.subspan(at, length);
    chunk.add_message(1, static_cast<std::uint32_t>(written.size()), at, at, piece);
    written.emplace_back(piece.begin(), piece.end());
    at += length + 1;
    if (written.size() % 7 == 0) {
      add(writer.chunk(chunk, "x", Bytes(chunk.records().rbegin(), chunk.records().rend())));
      chunk.clear();
    }
  }
  if (!chunk.empty()) add(writer.chunk(chunk, "", {}));
  add(writer.finish());
  const Recording read = read_all(file, decompress);
  trap_unless(read.state == Reader::State::Ended);
  trap_unless(read.messages.size() == written.size());
  for (std::size_t i = 0; i < written.size(); ++i) trap_unless(read.messages[i].data == written[i]);
  const std::size_t cut = size == 0 ? 0 : data[0] * file.size() / 256;
  const Recording partial = read_all(ByteView(file).first(cut), decompress);
  trap_unless(partial.state == Reader::State::Reading);
  trap_unless(partial.messages.size() <= written.size());
  for (std::size_t i = 0; i < partial.messages.size(); ++i) trap_unless(partial.messages[i].data == written[i]);
  return 0;
}
