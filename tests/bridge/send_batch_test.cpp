// Several clients' writes in one go: through io_uring where the kernel
// allows it, else one send() each. Both paths are run on every machine (the
// plain one always; io_uring where the kernel gives this process a ring),
// and must answer alike.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>
#include <vector>

#include "flockbridge/bridge/send_batch.hpp"
#include "support/read_available.hpp"

using flockbridge::bridge::SendBatch;

namespace {

/// A connected pair of stream sockets: the bridge's end and its client's.
struct Pair {
  int ours = -1;
  int theirs = -1;
  Pair() {
    std::array<int, 2> fds{};
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds.data()) == 0);
    ours = fds[0];
    theirs = fds[1];
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
  ~Pair() {
    if (ours >= 0) ::close(ours);
    if (theirs >= 0) ::close(theirs);
  }
  /// Everything the client can read now.
  [[nodiscard]] std::string received() const { return flockbridge::testing::read_available(theirs); }
};

iovec piece(const std::string& text) {
  return iovec{const_cast<char*>(text.data()), text.size()};
}

/// Whether the kernel gives this process an io_uring at all (asked without liburing).
bool kernel_offers_rings() {
  io_uring_params params{};
  const long fd = ::syscall(__NR_io_uring_setup, 2, &params);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
}

std::vector<bool> both_paths() {
  return {true, false};
}

}  // namespace

TEST_CASE("io_uring is taken wherever the kernel offers it, and its absence is said plainly") {
  const SendBatch plain(false);
  CHECK_FALSE(plain.uses_ring());
  CHECK(plain.summary() == "one send() a client (io_uring is turned off: clients.io_uring)");

  const SendBatch asked(true);
  if (kernel_offers_rings()) {
    CHECK(asked.uses_ring());
    CHECK(asked.summary() == "io_uring, up to 8 clients a submission");
  } else {
    // Older kernels, seccomp profiles that refuse io_uring_setup, qemu-user.
    CHECK_FALSE(asked.uses_ring());
    CHECK(asked.summary().rfind("one send() a client (io_uring refused: ", 0) == 0);
  }
}

TEST_CASE("a batch's writes each reach their own client whole, and each result comes back with its owner") {
  for (const bool ring : both_paths()) {
    CAPTURE(ring);
    SendBatch batch(ring);
    std::array<Pair, SendBatch::kCapacity> clients;
    std::array<int, SendBatch::kCapacity> owners{};
    const std::string one = "{\"seq\":1}\n";
    const std::string two = "{\"seq\":2}\n";
    const std::string three = "{\"type\":\"dropped\",\"count\":3}\n";
    CHECK(batch.empty());
    for (std::size_t i = 0; i < clients.size(); ++i) {
      // Every other client gets three messages in one write (sendmsg), the others one (send).
      std::vector<iovec> pieces{piece(one)};
      if (i % 2 == 1) {
        pieces.push_back(piece(two));
        pieces.push_back(piece(three));
      }
      batch.add(clients[i].ours, pieces, &owners[i]);
    }
    CHECK(batch.full());
    const auto results = batch.send();
    CHECK(batch.empty());
    REQUIRE(results.size() == clients.size());
    for (std::size_t i = 0; i < clients.size(); ++i) {
      CAPTURE(i);
      const std::string expected = i % 2 == 1 ? one + two + three : one;
      CHECK(results[i].owner == &owners[i]);
      CHECK(results[i].error == 0);
      CHECK(results[i].written == static_cast<ssize_t>(expected.size()));
      CHECK(clients[i].received() == expected);
    }
    // The next batch starts empty: nothing of the last is written again.
    Pair again;
    batch.add(again.ours, std::vector<iovec>{piece(two)}, nullptr);
    CHECK(batch.send().size() == 1);
    CHECK(again.received() == two);
    CHECK(clients[0].received().empty());
  }
}

TEST_CASE("a client whose buffer is full: the kernel takes what fits, then says EAGAIN at once, never waits") {
  for (const bool ring : both_paths()) {
    CAPTURE(ring);
    SendBatch batch(ring);
    Pair reader;
    Pair stuck;
    const int small = 4096;
    REQUIRE(::setsockopt(stuck.ours, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
    const std::string big(std::size_t{1} << 20, 'x');  // far more than the socket holds
    const std::string line = "{\"seq\":7}\n";
    batch.add(stuck.ours, std::vector<iovec>{piece(big)}, &stuck);
    batch.add(reader.ours, std::vector<iovec>{piece(line)}, &reader);
    auto results = batch.send();
    REQUIRE(results.size() == 2);
    CHECK(results[0].owner == &stuck);
    CHECK(results[0].error == 0);
    CHECK(results[0].written > 0);
    CHECK(results[0].written < static_cast<ssize_t>(big.size()));
    // The client behind it in the batch is not held up by it.
    CHECK(results[1].error == 0);
    CHECK(reader.received() == line);

    // Full now: the next write returns at once with nothing taken.
    batch.add(stuck.ours, std::vector<iovec>{piece(big)}, &stuck);
    results = batch.send();
    REQUIRE(results.size() == 1);
    CHECK(results[0].written == 0);
    CHECK((results[0].error == EAGAIN || results[0].error == EWOULDBLOCK));
  }
}

TEST_CASE("a client gone: its write fails with EPIPE, without a signal, and the others' go through") {
  for (const bool ring : both_paths()) {
    CAPTURE(ring);
    SendBatch batch(ring);
    Pair gone;
    Pair here;
    ::close(gone.theirs);
    gone.theirs = -1;
    const std::string line = "{\"seq\":9}\n";
    batch.add(gone.ours, std::vector<iovec>{piece(line)}, &gone);
    batch.add(here.ours, std::vector<iovec>{piece(line)}, &here);
    const auto results = batch.send();
    REQUIRE(results.size() == 2);
    CHECK(results[0].written == 0);
    CHECK(results[0].error == EPIPE);
    CHECK(results[1].error == 0);
    CHECK(here.received() == line);
  }
}

TEST_CASE("a write outside a batch goes at once, one piece or several") {
  Pair client;
  const std::string one = "a\n";
  const std::string two = "bc\n";
  const auto single = SendBatch::send_now(client.ours, std::vector<iovec>{piece(one)});
  CHECK(single.written == 2);
  const auto several = SendBatch::send_now(client.ours, std::vector<iovec>{piece(one), piece(two)}, &client);
  CHECK(several.owner == &client);
  CHECK(several.written == 5);
  CHECK(client.received() == "a\na\nbc\n");
}
