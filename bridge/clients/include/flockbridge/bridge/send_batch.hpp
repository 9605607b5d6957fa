// Several clients' writes handed to the kernel together. A loop turn that
// writes a sensor message to a thousand clients makes a thousand system
// calls with one send() each; with io_uring (Linux 5.19 and later, where the
// kernel and the process's sandbox allow it) a few clients' writes go in one
// submission, which saves most of the entries into the kernel. The plain
// path, one send() or sendmsg() a client, is kept for every machine where
// io_uring is refused (older kernels, containers whose seccomp profile
// forbids it, qemu-user) and when the configuration turns it off.
//
// Every write is non-blocking: the kernel takes what fits in the socket's
// buffer and says how much; nothing is left in flight when send() returns,
// so the caller treats a result exactly as that of its own send().
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace flockbridge::bridge {

class SendBatch {
 public:
  /// Writes in one submission; the caller writes that many clients between
  /// two readings of the clock.
  static constexpr std::size_t kCapacity = 8;

  /// One write's outcome: bytes the kernel took, or the errno that refused
  /// it (EAGAIN: its buffer is full). `owner` is the caller's, given to add().
  struct Result {
    void* owner = nullptr;
    ssize_t written = 0;
    int error = 0;
  };

  /// `ring`: use io_uring where the kernel allows it; false: one send() a write.
  explicit SendBatch(bool ring);
  ~SendBatch();
  SendBatch(const SendBatch&) = delete;
  SendBatch& operator=(const SendBatch&) = delete;

  /// Whether writes go through io_uring.
  [[nodiscard]] bool uses_ring() const noexcept { return ring_ != nullptr; }
  /// How writes go, for the start-up log: "io_uring, 8 clients a
  /// submission" or "one send() a client (io_uring: <why not>)".
  [[nodiscard]] const std::string& summary() const noexcept { return summary_; }

  [[nodiscard]] bool full() const noexcept { return writes_.size() == kCapacity; }
  [[nodiscard]] bool empty() const noexcept { return writes_.empty(); }
  /// Adds a write of `pieces` (copied; the bytes they point to must stay
  /// until send() returns) to the socket `fd`. Not when full().
  void add(int fd, std::span<const iovec> pieces, void* owner);
  /// Writes everything added since the last call; the results are in the
  /// order the writes were added, valid until the next add().
  [[nodiscard]] std::span<const Result> send();

  /// One non-blocking write now, EINTR retried: the plain path, and what a
  /// client's own flush uses outside a batch.
  [[nodiscard]] static Result send_now(int fd, std::span<const iovec> pieces, void* owner = nullptr);

 private:
  struct Write {
    int fd;
    std::size_t first;  ///< into pieces_
    std::size_t count;
    void* owner;
  };
  struct Ring;

  void send_through_ring();
  void give_up_ring(std::string why);

  std::unique_ptr<Ring> ring_;
  std::string summary_;
  std::vector<Write> writes_;
  std::vector<iovec> pieces_;
  std::vector<Result> results_;
};

}  // namespace flockbridge::bridge
