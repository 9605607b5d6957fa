// Work done on a thread of its own (writing a recording to disk, looking a
// host name up), its completion run on the loop afterwards, in order.
//
// It stands in for libuv's thread pool (uv_queue_work) in a loop that runs
// in a real-time class: libuv (1.44, Debian 12's) tells the loop that a
// piece of work is done through an async handle, and the loop's side spins,
// yielding, while the worker is between two steps of its telling. A worker
// in the ordinary class that the real-time loop it has just woken preempts
// there, on the same core, does not run again while the loop spins (a
// real-time thread's sched_yield yields to real-time threads alone): with a
// recording on, the loop spun for most of its core. Here the worker says a
// job is done with one write to an eventfd, which the loop polls; the two
// share only a mutex held for a queue operation. The worker thread starts
// at the first job, in the ordinary class (the loop's class is reset for
// the threads it starts).
#pragma once

#include <uv.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge {

class WorkQueue {
 public:
  WorkQueue() = default;
  WorkQueue(const WorkQueue&) = delete;  // its handle and thread point at it
  WorkQueue& operator=(const WorkQueue&) = delete;
  WorkQueue(WorkQueue&&) = delete;
  WorkQueue& operator=(WorkQueue&&) = delete;
  /// Does the work already asked for (a recording's last chunk and its end
  /// are written), without its completions, and ends the thread.
  ~WorkQueue() { reset(); }

  [[nodiscard]] int init(uv_loop_t* loop);
  /// Runs `work` on the worker thread, then `done` on the loop; jobs run one
  /// at a time, in the order submitted. False when the thread cannot start
  /// (the job is not taken).
  bool submit(std::function<void()> work, std::function<void()> done);
  /// As the destructor.
  void reset() noexcept;

 private:
  struct Job {
    std::function<void()> work;
    std::function<void()> done;
  };
  void run();
  void completed();

  uv_loop_t* loop_ = nullptr;
  int event_fd_ = -1;
  UvHandle<uv_poll_t> poll_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> todo_;      ///< for the worker
  std::deque<Job> finished_;  ///< for the loop: their done()
  bool stopping_ = false;
  std::size_t pending_ = 0;  ///< submitted, their done() not yet run (the loop's)
};

}  // namespace flockbridge::bridge
