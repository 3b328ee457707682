// MetricsShare: the K API servers of one `tandem serve --api-server-count K` share one port,
// so a /metrics scrape reaches whichever process the kernel picks. Each keeps its totals in its
// slot of one POSIX shared-memory table and renders the sum of all K slots, so every scrape
// sees the whole server and counters never step back between scrapes (vLLM gets the same from
// prometheus_client's multiprocess mode).
// A slot is written by its own process only, under a sequence lock: readers retry while a
// write is in progress, so they never see half of one.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "server/metrics_totals.h"

namespace tandem::server {

// The table of the `tandem serve` head with process id `head_pid` (API servers 1..K-1 are its
// children: they pass getppid()).
std::string MetricsShareName(long head_pid);

class MetricsShare {
 public:
  // Creates the table `name` (MetricsShareName) with `num_slots` zeroed slots of
  // `num_engines` EngineTotals each (one per DP rank), replacing a table of that name left by a
  // killed process (the name holds the creator's pid); the creator removes the name again on
  // destruction. Errors: kUnavailable naming the table and errno.
  static Result<std::unique_ptr<MetricsShare>> Create(const std::string& name, int num_slots,
                                                      int num_engines);
  // Opens a table another process created. Errors: kUnavailable when it does not exist, or
  // kInvalidArgument when its size is not `num_slots` slots of `num_engines` (a different
  // build, K or DP size).
  static Result<std::unique_ptr<MetricsShare>> Open(const std::string& name, int num_slots,
                                                    int num_engines);
  ~MetricsShare();

  // Publishes this process's totals into `slot` (0 ≤ slot < num_slots; ours alone); ranks at
  // or beyond num_engines are left out.
  void Store(int slot, const MetricsTotals& totals);
  // Publishes only the totals of rank `dp_rank` (ignored at or beyond num_engines).
  void Store(int slot, int32_t dp_rank, const EngineTotals& totals);
  // Σ of every slot but `slot`: num_engines EngineTotals.
  MetricsTotals SumOfOthers(int slot) const;
  int num_slots() const { return num_slots_; }
  int num_engines() const { return num_engines_; }

 private:
  struct SlotHeader;
  MetricsShare(std::string name, int num_slots, int num_engines, void* table, bool owner);
  static size_t SlotBytes(int num_engines);
  SlotHeader& Header(int slot) const;
  EngineTotals* Engines(int slot) const;
  MetricsTotals Load(int slot) const;

  std::string name_;
  int num_slots_;
  int num_engines_;
  char* table_;  // num_slots_ × SlotBytes(num_engines_)
  bool owner_;
};

}  // namespace tandem::server
