// A recording read back whole by the project's MCAP reader (protocol/mcap),
// its zstd chunks opened with libzstd itself, independent of the bridge's
// own reading of recordings: what the recording and replay tests check.
#pragma once

#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "flockbridge/protocol/mcap/reader.hpp"

namespace flockbridge::testing {

[[nodiscard]] inline protocol::mcap::Recording read_recording(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return protocol::mcap::read_all(protocol::Bytes(text.begin(), text.end()),
                                  [](std::string_view compression, protocol::ByteView data,
                                     std::uint64_t size) -> protocol::Result<protocol::Bytes> {
                                    if (compression != "zstd") return protocol::Error{"not zstd"};
                                    protocol::Bytes out(size);
                                    const std::size_t got =
                                        ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
                                    if (ZSTD_isError(got) != 0 || got != size) return protocol::Error{"bad zstd"};
                                    return out;
                                  });
}

}  // namespace flockbridge::testing
