// The ranks of a parallel test as threads of one process, run so that a failing rank makes the
// test fail instead of hang. The hazard: ASSERT_* returns only from the rank's own function, and
// its peers then wait for it forever, in a collective or in a loop that waits on its progress
// (DP waves). Invariant: every rank thread has returned, or the test has failed naming the ranks
// that did not and the process has exited, within the deadlines below. ctest's TIMEOUT is only
// the last resort.
// - Each rank's body runs under SCOPED_TRACE("rank r"): its gtest failures name the rank.
// - An exception escaping a body is a failure naming the rank (not std::terminate).
// - `stop` turns true once a rank ended with a fatal failure or an exception: a body's loops that
//   wait on peers check it and give up.
// - The "local" collectives time out on their own: parallel tests create their groups with
//   LocalGroupSpec (kRankCollectiveTimeoutS), so a rank waiting in a collective for a peer that
//   stopped entering them fails; a peer that returned leaves its groups, and ranks still in
//   them fail at once. Either way the model TANDEM_CHECKs the status and aborts the process,
//   naming the group and the cause.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "comm/process_group.h"

namespace tandem::rank_threads {

// GroupSpec::timeout_s for the groups of a test's rank threads: far above a healthy wait (tiny
// models, ranks in lock-step), well inside the 60 s a hung test may take to fail.
inline constexpr double kRankCollectiveTimeoutS = 20;

// Rank `rank` of the "local" group `name` of `size` ranks, timing out after
// kRankCollectiveTimeoutS.
inline comm::GroupSpec LocalGroupSpec(const std::string& name, int rank, int size) {
  comm::GroupSpec spec;
  spec.backend = "local";
  spec.name = name;
  spec.rank = rank;
  spec.size = size;
  spec.timeout_s = kRankCollectiveTimeoutS;
  return spec;
}

struct RankDeadlines {
  double timeout_s = 50;            // every rank returns within this of the start
  double straggler_timeout_s = 20;  // ... and within this of the first rank to return
};

using RankBody = std::function<void(int rank, const std::atomic<bool>& stop)>;

// Runs body(rank, stop) for rank 0 … num_ranks-1, each on its own thread, and joins them. Ranks
// still running past `deadlines` are named in a test failure (also written to stderr) and the
// process exits with status 1: a thread blocked in a collective can be neither joined nor
// cancelled, and gtest runs one test per process under ctest. Call from the test's thread.
inline void RunRankThreads(int num_ranks, const RankBody& body, RankDeadlines deadlines = {}) {
  using Clock = std::chrono::steady_clock;
  struct Progress {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<bool> returned;
    int num_returned = 0;
    int first_returned = -1;
    std::optional<Clock::time_point> first_returned_at;
    std::atomic<bool> stop{false};
  };
  // Shared: a hung thread still holds it when the process exits.
  auto progress = std::make_shared<Progress>();
  progress->returned.assign(num_ranks, false);
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < num_ranks; ++rank) {
    threads.emplace_back([progress, &body, rank] {
      bool failed = false;
      {
        SCOPED_TRACE("rank " + std::to_string(rank));
        try {
          body(rank, progress->stop);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "rank " << rank << " threw: " << e.what();
          failed = true;
        } catch (...) {
          ADD_FAILURE() << "rank " << rank << " threw a non-std exception";
          failed = true;
        }
      }
      // A fatal failure anywhere in the test so far (gtest keeps no per-thread record): after
      // it, peers waiting on this rank's progress must give up.
      if (failed || ::testing::Test::HasFatalFailure()) progress->stop.store(true);
      std::lock_guard<std::mutex> lock(progress->mu);
      progress->returned[rank] = true;
      ++progress->num_returned;
      if (!progress->first_returned_at) {
        progress->first_returned_at = Clock::now();
        progress->first_returned = rank;
      }
      progress->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(progress->mu);
  const auto deadline = [&] {
    Clock::time_point at = start + seconds(deadlines.timeout_s);
    if (progress->first_returned_at) {
      at = std::min(at, *progress->first_returned_at + seconds(deadlines.straggler_timeout_s));
    }
    return at;
  };
  while (progress->num_returned < num_ranks && Clock::now() < deadline()) {
    progress->cv.wait_until(lock, deadline());
  }
  if (progress->num_returned < num_ranks) {
    std::string hung;
    for (int rank = 0; rank < num_ranks; ++rank) {
      if (!progress->returned[rank]) hung += (hung.empty() ? "" : ", ") + std::to_string(rank);
    }
    std::ostringstream message;
    message << "ranks [" << hung << "] of " << num_ranks << " did not return within ";
    if (progress->first_returned_at) {
      message << deadlines.straggler_timeout_s << " s of rank " << progress->first_returned;
    } else {
      message << deadlines.timeout_s << " s";
    }
    message << " (waiting for a peer that failed?); exiting, since a blocked thread can be "
               "neither joined nor cancelled";
    ADD_FAILURE() << message.str();
    std::fprintf(stderr, "%s\n", message.str().c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
  lock.unlock();
  for (std::thread& thread : threads) thread.join();
}

}  // namespace tandem::rank_threads
