#include "flockbridge/bridge/send_batch.hpp"

#include <liburing.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace flockbridge::bridge {
namespace {

/// A client's socket is never waited on: a full buffer is an answer (EAGAIN),
/// and a client gone is not a signal. With MSG_DONTWAIT io_uring also
/// finishes the write during the submission instead of arming a poll.
constexpr int kSendFlags = MSG_NOSIGNAL | MSG_DONTWAIT;

/// Room for a full batch and the cancellation that may follow it.
constexpr unsigned kRingEntries = SendBatch::kCapacity * 2;

/// The cancellation's tag: no write has it.
constexpr std::uint64_t kCancelTag = ~std::uint64_t{0};

/// How long a write the kernel did not finish at once may take to end once
/// cancelled, before io_uring is given up.
constexpr long long kCancelWaitNs = 100'000'000;

std::string error_text(int error) {
  return std::strerror(error);
}

}  // namespace

struct SendBatch::Ring {
  io_uring ring{};
  std::array<msghdr, kCapacity> headers{};
  std::array<bool, kCapacity> finished{};

  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() { io_uring_queue_exit(&ring); }
};

SendBatch::SendBatch(bool ring) {
  writes_.reserve(kCapacity);
  results_.reserve(kCapacity);
  if (!ring) {
    summary_ = "one send() a client (io_uring is turned off: clients.io_uring)";
    return;
  }
  // No constructor of Ring may fail: io_uring_queue_exit is only for a ring set up.
  io_uring made{};
  io_uring_params params{};
  // Cheaper completions for a ring only the loop's thread submits to (Linux
  // 6.0); an older kernel refuses the flags and gets a plain ring.
  params.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER;
  int rc = io_uring_queue_init_params(kRingEntries, &made, &params);
  if (rc == -EINVAL) {
    params = io_uring_params{};
    rc = io_uring_queue_init_params(kRingEntries, &made, &params);
  }
  if (rc < 0) {
    summary_ = "one send() a client (io_uring refused: " + error_text(-rc) + ")";
    return;
  }
  ring_ = std::make_unique<Ring>();
  ring_->ring = made;
  io_uring_probe* probe = io_uring_get_probe_ring(&ring_->ring);
  const bool supported = probe != nullptr && io_uring_opcode_supported(probe, IORING_OP_SEND) != 0 &&
                         io_uring_opcode_supported(probe, IORING_OP_SENDMSG) != 0 &&
                         io_uring_opcode_supported(probe, IORING_OP_ASYNC_CANCEL) != 0;
  if (probe != nullptr) io_uring_free_probe(probe);
  if (!supported) {
    give_up_ring("the kernel's io_uring has no send");
    return;
  }
  summary_ = "io_uring, up to " + std::to_string(kCapacity) + " clients a submission";
}

SendBatch::~SendBatch() = default;

void SendBatch::add(int fd, std::span<const iovec> pieces, void* owner) {
  writes_.push_back(Write{fd, pieces_.size(), pieces.size(), owner});
  pieces_.insert(pieces_.end(), pieces.begin(), pieces.end());
}

std::span<const SendBatch::Result> SendBatch::send() {
  results_.clear();
  if (ring_ && !writes_.empty()) {
    send_through_ring();
  } else {
    for (const Write& write : writes_) {
      results_.push_back(send_now(write.fd, std::span(pieces_).subspan(write.first, write.count), write.owner));
    }
  }
  writes_.clear();
  pieces_.clear();
  return results_;
}

SendBatch::Result SendBatch::send_now(int fd, std::span<const iovec> pieces, void* owner) {
  Result result{owner, 0, 0};
  ssize_t written = 0;
  do {
    if (pieces.size() == 1) {
      // One message (a client that keeps up): send() skips copying an iovec array in.
      written = ::send(fd, pieces[0].iov_base, pieces[0].iov_len, kSendFlags);
    } else {
      msghdr message{};
      message.msg_iov = const_cast<iovec*>(pieces.data());
      message.msg_iovlen = pieces.size();
      written = ::sendmsg(fd, &message, kSendFlags);
    }
  } while (written < 0 && errno == EINTR);
  if (written < 0) {
    result.error = errno;
  } else {
    result.written = written;
  }
  return result;
}

void SendBatch::send_through_ring() {
  Ring& ring = *ring_;
  const std::size_t count = writes_.size();
  for (std::size_t i = 0; i < count; ++i) {
    const Write& write = writes_[i];
    io_uring_sqe* sqe = io_uring_get_sqe(&ring.ring);  // never null: the ring has room for two batches
    if (write.count == 1) {
      io_uring_prep_send(sqe, write.fd, pieces_[write.first].iov_base, pieces_[write.first].iov_len, kSendFlags);
    } else {
      msghdr& header = ring.headers[i];
      header = msghdr{};
      header.msg_iov = &pieces_[write.first];
      header.msg_iovlen = write.count;
      io_uring_prep_sendmsg(sqe, write.fd, &header, kSendFlags);
    }
    io_uring_sqe_set_data64(sqe, i);
    results_.push_back(Result{write.owner, 0, EAGAIN});
    ring.finished[i] = false;
  }

  std::size_t finished = 0;
  const auto reap = [&] {
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring.ring, head, cqe) {
      ++seen;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag >= count || ring.finished[tag]) continue;  // the cancellation's own
      ring.finished[tag] = true;
      ++finished;
      Result& result = results_[tag];
      if (cqe->res >= 0) {
        result.written = cqe->res;
        result.error = 0;
      } else {
        // Cancelled (below): nothing was written, as when the buffer is full.
        result.error = cqe->res == -ECANCELED ? EAGAIN : -cqe->res;
      }
    }
    io_uring_cq_advance(&ring.ring, seen);
  };

  int rc = 0;
  do {
    rc = io_uring_submit(&ring.ring);
  } while (rc == -EINTR);
  reap();
  if (rc < 0) {
    // The writes not reaped are taken as not written (their bytes go on
    // through the caller's slower path); the ring, with whatever it had not
    // started, is closed.
    give_up_ring("the submission failed: " + error_text(-rc));
    return;
  }
  if (finished == count) return;

  // A write the kernel did not finish during the submission (a kernel that
  // arms a poll despite MSG_DONTWAIT): cancel it and wait for its end, so
  // that nothing is left writing the caller's buffers behind its back.
  io_uring_sqe* cancel = io_uring_get_sqe(&ring.ring);
  io_uring_prep_cancel64(cancel, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL);
  io_uring_sqe_set_data64(cancel, kCancelTag);
  io_uring_submit(&ring.ring);
  while (finished < count) {
    __kernel_timespec wait{0, kCancelWaitNs};
    io_uring_cqe* cqe = nullptr;
    rc = io_uring_wait_cqe_timeout(&ring.ring, &cqe, &wait);
    if (rc < 0 && rc != -EINTR) {
      give_up_ring("a cancelled write did not end: " + error_text(-rc));
      return;
    }
    reap();
  }
}

void SendBatch::give_up_ring(std::string why) {
  ring_.reset();
  summary_ = "one send() a client (io_uring given up: " + std::move(why) + ")";
}

}  // namespace flockbridge::bridge
