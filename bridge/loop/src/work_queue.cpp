#include "flockbridge/bridge/work_queue.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <system_error>
#include <utility>

namespace flockbridge::bridge {

int WorkQueue::init(uv_loop_t* loop) {
  loop_ = loop;
  event_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) return -errno;
  const int rc = poll_.init(this, [this](uv_poll_t* p) { return uv_poll_init(loop_, p, event_fd_); });
  if (rc < 0) return rc;
  uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* poll, int /*status*/, int /*events*/) {
    if (auto* self = owner_of<WorkQueue>(poll)) self->completed();
  });
  // Waiting for completions keeps no loop alive; the work asked for does (below).
  uv_unref(reinterpret_cast<uv_handle_t*>(poll_.get()));
  return 0;
}

bool WorkQueue::submit(std::function<void()> work, std::function<void()> done) {
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      return false;
    }
  }
  {
    const std::lock_guard lock(mutex_);
    todo_.push_back({std::move(work), std::move(done)});
  }
  wake_.notify_one();
  // A job under way keeps the loop alive until its completion has run.
  if (pending_++ == 0 && poll_) uv_ref(reinterpret_cast<uv_handle_t*>(poll_.get()));
  return true;
}

void WorkQueue::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !todo_.empty(); });
      if (todo_.empty()) return;  // stopping, and nothing left to do
      job = std::move(todo_.front());
      todo_.pop_front();
    }
    job.work();
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) continue;  // nobody waits for its completion
      finished_.push_back(std::move(job));
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(event_fd_, &one, sizeof(one));
  }
}

void WorkQueue::completed() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t read = ::read(event_fd_, &count, sizeof(count));
  std::deque<Job> done;
  {
    const std::lock_guard lock(mutex_);
    done.swap(finished_);
  }
  pending_ -= std::min(pending_, done.size());
  if (pending_ == 0 && poll_) uv_unref(reinterpret_cast<uv_handle_t*>(poll_.get()));
  for (Job& job : done) job.done();
}

void WorkQueue::reset() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  poll_.reset();
  if (event_fd_ >= 0) ::close(event_fd_);
  event_fd_ = -1;
}

}  // namespace flockbridge::bridge
