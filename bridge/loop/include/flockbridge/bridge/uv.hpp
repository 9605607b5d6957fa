// Small owners for libuv handles. A handle's memory may only be released in
// its close callback, so an owner's destruction starts uv_close() and the
// callback frees the memory; the handle's `data` is cleared first, so a
// callback that fires during the close finds no owner and does nothing.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "flockbridge/protocol/message_decoder.hpp"

namespace flockbridge::bridge {

using protocol::SteadyTime;

[[nodiscard]] inline SteadyTime steady_now() noexcept {
  return std::chrono::steady_clock::now();
}

/// The time as clients get it: Unix seconds.
[[nodiscard]] inline double unix_seconds_now() noexcept {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// The time as recordings hold it: nanoseconds since the Unix epoch.
[[nodiscard]] inline std::uint64_t unix_ns_now() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

/// "connection refused (ECONNREFUSED)".
[[nodiscard]] std::string uv_error_text(int code);

template <typename T>
class UvHandle {
 public:
  UvHandle() = default;
  UvHandle(const UvHandle&) = delete;
  UvHandle& operator=(const UvHandle&) = delete;
  UvHandle(UvHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UvHandle& operator=(UvHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~UvHandle() { reset(); }

  /// Allocates the handle and runs `init` on it (uv_timer_init and the
  /// like). Returns init's libuv code; on failure nothing is kept.
  template <typename Init>
  [[nodiscard]] int init(void* owner, Init&& init_handle) {
    reset();
    auto* handle = new T{};
    const int rc = std::forward<Init>(init_handle)(handle);
    if (rc < 0) {
      delete handle;
      return rc;
    }
    handle->data = owner;
    handle_ = handle;
    return 0;
  }

  /// Starts closing the handle; its memory goes in the close callback.
  void reset() noexcept {
    if (handle_ == nullptr) return;
    auto* base = reinterpret_cast<uv_handle_t*>(handle_);
    base->data = nullptr;
    uv_close(base, [](uv_handle_t* closed) { delete reinterpret_cast<T*>(closed); });
    handle_ = nullptr;
  }

  /// Gives up the handle without closing it: whoever takes it closes it.
  [[nodiscard]] T* release() noexcept { return std::exchange(handle_, nullptr); }

  [[nodiscard]] T* get() const noexcept { return handle_; }
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  T* handle_ = nullptr;
};

/// The owner stored in a handle's `data`, or nullptr once the owner let go.
template <typename Owner, typename Handle>
[[nodiscard]] Owner* owner_of(Handle* handle) noexcept {
  return static_cast<Owner*>(reinterpret_cast<uv_handle_t*>(handle)->data);
}

/// A timer that fires once at a steady-clock deadline, to the microsecond:
/// a Linux timerfd with the deadline in nanoseconds (CLOCK_MONOTONIC, the
/// steady clock's), watched by the loop. libuv's own timers count whole
/// milliseconds and round a deadline up to the next one, so that a 10 ms
/// period started from them comes anywhere up to a millisecond late. It
/// never fires early. The handle is active only while the timer is armed.
class DeadlineTimer {
 public:
  DeadlineTimer() = default;
  DeadlineTimer(const DeadlineTimer&) = delete;  // its handle points at it
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;
  DeadlineTimer(DeadlineTimer&&) = delete;
  DeadlineTimer& operator=(DeadlineTimer&&) = delete;
  ~DeadlineTimer() { reset(); }

  template <typename Owner, void (Owner::*Callback)()>
  [[nodiscard]] int init(uv_loop_t* loop, Owner* owner) {
    owner_ = owner;
    fire_ = [](void* o) { (static_cast<Owner*>(o)->*Callback)(); };
    return open(loop);
  }
  void start_at(SteadyTime deadline);
  void start_after(std::chrono::nanoseconds delay);
  void stop() noexcept;
  void reset() noexcept;

 private:
  [[nodiscard]] int open(uv_loop_t* loop);
  void arm(std::int64_t nanoseconds, bool absolute);

  UvHandle<uv_poll_t> poll_;
  int fd_ = -1;
  void* owner_ = nullptr;
  void (*fire_)(void*) = nullptr;
};

/// Work asked for once, done after the loop has next polled for I/O
/// (libuv's check phase), so that it sees everything that has arrived by
/// then: a timer's deadline is judged with the answers waiting unread in the
/// kernel taken in, events go out after the callbacks of the turn that
/// brought them. The poll before it never waits (an idle handle is active
/// meanwhile), so the work is done at once, whichever phase asked for it;
/// asked from a check callback, it is done in the loop's next turn.
class AfterPoll {
 public:
  AfterPoll() = default;
  AfterPoll(const AfterPoll&) = delete;  // its handles point at it
  AfterPoll& operator=(const AfterPoll&) = delete;
  AfterPoll(AfterPoll&&) = delete;
  AfterPoll& operator=(AfterPoll&&) = delete;
  ~AfterPoll() = default;

  template <typename Owner, void (Owner::*Callback)()>
  [[nodiscard]] int init(uv_loop_t* loop, Owner* owner) {
    owner_ = owner;
    work_ = [](void* o) { (static_cast<Owner*>(o)->*Callback)(); };
    const int rc = check_.init(this, [loop](uv_check_t* c) { return uv_check_init(loop, c); });
    if (rc < 0) return rc;
    return idle_.init(this, [loop](uv_idle_t* i) { return uv_idle_init(loop, i); });
  }
  /// Asks for the work (done once, however often asked before).
  void schedule() noexcept;
  /// The work is no longer wanted.
  void cancel() noexcept;
  void reset() noexcept {
    check_.reset();
    idle_.reset();
  }

 private:
  UvHandle<uv_check_t> check_;
  UvHandle<uv_idle_t> idle_;
  void* owner_ = nullptr;
  void (*work_)(void*) = nullptr;
};

/// The loop's turns, counted just before each poll for I/O: one prepare
/// handle, which keeps no loop alive, for every TurnShare of the loop.
class LoopTurns {
 public:
  LoopTurns() = default;
  LoopTurns(const LoopTurns&) = delete;  // its handle points at it
  LoopTurns& operator=(const LoopTurns&) = delete;
  LoopTurns(LoopTurns&&) = delete;
  LoopTurns& operator=(LoopTurns&&) = delete;
  ~LoopTurns() = default;

  [[nodiscard]] int init(uv_loop_t* loop);
  /// The turn the loop is in: it changes each time the loop polls.
  [[nodiscard]] std::uint64_t turn() const noexcept { return turn_; }
  void reset() noexcept { prepare_.reset(); }

  /// For a loop in a real-time class: after `busy` of turns without a wait
  /// for I/O, it sleeps `pause` before its next poll. A real-time loop that
  /// keeps its core busy (a thousand clients at the serial line's highest
  /// rate) would otherwise hold off every ordinary thread of that core, the
  /// kernel's soft-interrupt thread among them, which finishes the sockets'
  /// sends: their data then waits, for hundreds of milliseconds, behind the
  /// loop that wrote it. Off until asked (and where libuv cannot tell how
  /// long the loop waited).
  void breathe(std::chrono::nanoseconds busy, std::chrono::nanoseconds pause) noexcept;
  /// How often the loop has paused so.
  [[nodiscard]] std::uint64_t pauses() const noexcept { return pauses_; }

 private:
  void next_turn() noexcept;

  UvHandle<uv_prepare_t> prepare_;
  uv_loop_t* loop_ = nullptr;
  std::uint64_t turn_ = 1;
  bool metrics_ = false;
  std::chrono::nanoseconds busy_limit_{0};
  std::chrono::nanoseconds pause_{0};
  SteadyTime busy_since_{};
  std::uint64_t idle_ns_ = 0;
  std::uint64_t pauses_ = 0;
};

/// One rule for bulk work on the loop (writing a thousand clients' output,
/// accepting a class that connects at once, ending a class that leaves): a
/// loop turn, from one poll for I/O to the next, gives each kind of work
/// `share` of time, so that the robot's link (its timer, its bytes) comes
/// between two shares. The share starts at the first ask of a turn and is
/// fresh in every turn, however long the loop was quiet in between; the
/// work left over waits for a later turn (its owner's AfterPoll), and each
/// turn does at least one piece of it.
class TurnShare {
 public:
  /// `turns` outlives the share.
  TurnShare(const LoopTurns& turns, std::chrono::nanoseconds share) noexcept : turns_(turns), share_(share) {}

  /// Whether the work may go on now: always at the first ask of a turn,
  /// which starts the turn's share, then until the share has run out.
  [[nodiscard]] bool has_time(SteadyTime now = steady_now()) noexcept;

 private:
  const LoopTurns& turns_;
  std::chrono::nanoseconds share_;
  std::uint64_t share_turn_ = 0;  ///< the turn whose share began at share_start_
  SteadyTime share_start_{};
};

}  // namespace flockbridge::bridge
