// --scheduling-policy priority (docs/design/priority-scheduling.md): admission by (priority,
// arrival), preemption of the least important running request, and FCFS beside it.
#include <gtest/gtest.h>

#include <memory>

#include "engine/request_queue.h"
#include "engine/scheduler.h"
#include "testing.h"

namespace tandem::engine {
namespace {

using protocol::StepPlan;
using testing::Iota;
using testing::MakeConfig;
using testing::MakeRequest;
using testing::MakeResult;

protocol::EngineRequest Prioritized(const std::string& id, int64_t priority, double arrival_s,
                                    std::vector<int32_t> prompt, int32_t max_tokens) {
  protocol::EngineRequest request = MakeRequest(id, std::move(prompt), max_tokens);
  request.priority = priority;
  request.arrival_time_s = arrival_s;
  return request;
}

// One step answered with token 7 for every request whose tokens are all computed.
StepPlan Step(Scheduler& scheduler) {
  StepPlan plan = scheduler.Schedule();
  std::vector<std::string> partial;
  for (size_t i = 0; i < plan.scheduled_request_ids.size(); ++i) {
    const Request* r = scheduler.FindRequest(plan.scheduled_request_ids[i]);
    if (r->num_computed_tokens + plan.num_scheduled_tokens[i] < r->num_tokens()) {
      partial.push_back(plan.scheduled_request_ids[i]);
    }
  }
  scheduler.UpdateFromOutput(plan, MakeResult(plan, 7, partial));
  return plan;
}

// With one sequence at a time and one token each, the plans' new requests are the admission
// order.
std::vector<std::string> AdmissionOrder(SchedulingPolicy policy) {
  SchedulerConfig config = MakeConfig(64, 64, /*max_num_seqs=*/1);
  config.policy = policy;
  Scheduler scheduler(config);
  // (id, priority, arrival): added in this order.
  EXPECT_TRUE(scheduler.AddRequest(Prioritized("a", 0, 1.0, Iota(4), 1)).ok());
  EXPECT_TRUE(scheduler.AddRequest(Prioritized("b", -1, 2.0, Iota(4), 1)).ok());
  EXPECT_TRUE(scheduler.AddRequest(Prioritized("c", 5, 0.5, Iota(4), 1)).ok());
  EXPECT_TRUE(scheduler.AddRequest(Prioritized("d", -1, 1.5, Iota(4), 1)).ok());
  EXPECT_TRUE(scheduler.AddRequest(Prioritized("e", 0, 1.0, Iota(4), 1)).ok());  // ties a
  std::vector<std::string> order;
  for (int step = 0; step < 10 && scheduler.HasUnfinishedRequests(); ++step) {
    for (const protocol::NewRequestData& data : Step(scheduler).new_requests) {
      order.push_back(data.request_id);
    }
  }
  EXPECT_FALSE(scheduler.HasUnfinishedRequests());
  return order;
}

TEST(PrioritySchedulerTest, WaitingRequestsAreAdmittedByPriorityThenArrivalThenQueueOrder) {
  EXPECT_EQ(AdmissionOrder(SchedulingPolicy::kPriority),
            (std::vector<std::string>{"d", "b", "a", "e", "c"}));
}

TEST(PrioritySchedulerTest, FcfsAdmitsInQueueOrderWhateverThePriority) {
  EXPECT_EQ(AdmissionOrder(SchedulingPolicy::kFcfs),
            (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

// 6 blocks of 4 tokens. "low" (priority 5, 8 prompt tokens) runs first; "high" (priority 0,
// 11 prompt tokens) joins a step later. Three steps on, "high" needs its 4th block after
// "low" was already scheduled in the same step: 7 blocks would be needed.
struct OutOfBlocks {
  std::unique_ptr<Scheduler> scheduler;
  StepPlan plan;  // the step that ran out of blocks
};

OutOfBlocks RunUntilOutOfBlocks(SchedulingPolicy policy) {
  SchedulerConfig config = MakeConfig(/*num_gpu_blocks=*/6, 64, 16, /*max_model_len=*/24);
  config.policy = policy;
  OutOfBlocks run{std::make_unique<Scheduler>(config), {}};
  Scheduler& scheduler = *run.scheduler;
  EXPECT_TRUE(scheduler.AddRequest(Prioritized("low", 5, 1.0, Iota(8), 12)).ok());
  Step(scheduler);
  EXPECT_TRUE(scheduler.AddRequest(Prioritized("high", 0, 2.0, Iota(11, 100), 12)).ok());
  for (int step = 0; step < 10 && scheduler.num_preemptions() == 0; ++step) {
    run.plan = Step(scheduler);
  }
  EXPECT_EQ(scheduler.num_preemptions(), 1);
  return run;
}

TEST(PrioritySchedulerTest, PreemptsTheLeastImportantRequestEvenIfAlreadyScheduledThisStep) {
  OutOfBlocks run = RunUntilOutOfBlocks(SchedulingPolicy::kPriority);
  // "low" was scheduled before "high" ran out: it is taken out of the step, its token given
  // back, and "high" goes on with the freed blocks.
  EXPECT_EQ(run.plan.scheduled_request_ids, std::vector<std::string>{"high"});
  EXPECT_EQ(run.plan.num_scheduled_tokens, std::vector<int32_t>{1});
  EXPECT_TRUE(run.plan.cached_requests.size() == 1 &&
              run.plan.cached_requests[0].request_id == "high");
  EXPECT_EQ(run.plan.finished_request_ids, std::vector<std::string>{"low"});
  const Request* low = run.scheduler->FindRequest("low");
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->status, RequestStatus::kPreempted);
  EXPECT_EQ(low->num_computed_tokens, 0);
  EXPECT_EQ(run.scheduler->num_running(), 1);
  EXPECT_EQ(run.scheduler->num_waiting(), 1);
  // Both finish: "high" first, then "low" resumes with every token it had.
  const std::vector<int32_t> low_tokens = low->all_token_ids();
  bool low_resumed = false;
  for (int step = 0; step < 60 && run.scheduler->HasUnfinishedRequests(); ++step) {
    const StepPlan plan = Step(*run.scheduler);
    for (const protocol::NewRequestData& data : plan.new_requests) {
      if (data.request_id != "low") continue;
      low_resumed = true;
      EXPECT_EQ(run.scheduler->FindRequest("high"), nullptr) << "resumed before high finished";
      EXPECT_EQ(data.token_ids, low_tokens);
    }
  }
  EXPECT_TRUE(low_resumed);
  EXPECT_FALSE(run.scheduler->HasUnfinishedRequests());
  EXPECT_EQ(run.scheduler->kv_cache_manager().Usage(), 0.0);
}

TEST(PrioritySchedulerTest, FcfsPreemptsTheNewestRequestInTheSameSituation) {
  OutOfBlocks run = RunUntilOutOfBlocks(SchedulingPolicy::kFcfs);
  EXPECT_EQ(run.plan.scheduled_request_ids, std::vector<std::string>{"low"});
  EXPECT_EQ(run.plan.finished_request_ids, std::vector<std::string>{"high"});
  ASSERT_NE(run.scheduler->FindRequest("high"), nullptr);
  EXPECT_EQ(run.scheduler->FindRequest("high")->status, RequestStatus::kPreempted);
}

TEST(PrioritySchedulerTest, ARequestThatIsItselfTheLeastImportantGivesWay) {
  // Two running requests; the one that needs a block is the least important: it is
  // preempted, nothing else this step (vLLM stops serving running requests then).
  SchedulerConfig config = MakeConfig(/*num_gpu_blocks=*/6, 64, 16, /*max_model_len=*/24);
  config.policy = SchedulingPolicy::kPriority;
  Scheduler scheduler(config);
  ASSERT_TRUE(scheduler.AddRequest(Prioritized("low", 5, 1.0, Iota(8), 12)).ok());
  Step(scheduler);
  ASSERT_TRUE(scheduler.AddRequest(Prioritized("high", 0, 2.0, Iota(8, 100), 12)).ok());
  StepPlan plan;
  for (int step = 0; step < 10 && scheduler.num_preemptions() == 0; ++step) {
    plan = Step(scheduler);
  }
  ASSERT_EQ(scheduler.num_preemptions(), 1);
  EXPECT_TRUE(plan.scheduled_request_ids.empty());
  EXPECT_EQ(scheduler.FindRequest("low")->status, RequestStatus::kPreempted);
  EXPECT_EQ(scheduler.FindRequest("high")->status, RequestStatus::kRunning);
}

Request MakeQueued(const std::string& id, int64_t priority, double arrival_s, int64_t seq) {
  Request request(Prioritized(id, priority, arrival_s, Iota(4), 1));
  request.arrival_seq = seq;
  return request;
}

std::vector<std::string> Drain(RequestQueue& queue) {
  std::vector<std::string> ids;
  while (!queue.empty()) {
    ids.push_back(queue.Front()->request_id());
    queue.PopFront();
  }
  return ids;
}

TEST(RequestQueueTest, PriorityQueueReinsertsAPreemptedRequestByItsKey) {
  Request a = MakeQueued("a", 1, 1.0, 0), b = MakeQueued("b", 0, 3.0, 1),
          c = MakeQueued("c", 1, 2.0, 2), d = MakeQueued("d", 1, 2.0, 3);
  RequestQueue queue(SchedulingPolicy::kPriority);
  queue.Add(&d);
  queue.Add(&c);
  queue.Add(&b);
  queue.Prepend(&a);  // preempted: not at the front, by its key
  queue.Remove(&b);
  queue.Add(&b);
  EXPECT_EQ(queue.size(), 4u);
  EXPECT_EQ(Drain(queue), (std::vector<std::string>{"b", "a", "c", "d"}));
}

TEST(RequestQueueTest, FcfsQueuePutsAPreemptedRequestFirst) {
  Request a = MakeQueued("a", 9, 1.0, 0), b = MakeQueued("b", -9, 2.0, 1),
          c = MakeQueued("c", 0, 3.0, 2);
  RequestQueue queue(SchedulingPolicy::kFcfs);
  queue.Add(&b);
  queue.Add(&c);
  queue.Prepend(&a);
  queue.Remove(&c);
  EXPECT_EQ(Drain(queue), (std::vector<std::string>{"a", "b"}));
}

TEST(SchedulingPolicyTest, ParsesVllmsNamesAndRefusesOthersNamingThem) {
  EXPECT_EQ(ParseSchedulingPolicy("fcfs").value(), SchedulingPolicy::kFcfs);
  EXPECT_EQ(ParseSchedulingPolicy("priority").value(), SchedulingPolicy::kPriority);
  const Result<SchedulingPolicy> bad = ParseSchedulingPolicy("lifo");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "scheduling policy 'lifo' is not one of: fcfs, priority");
  EXPECT_STREQ(SchedulingPolicyName(SchedulingPolicy::kPriority), "priority");
}

}  // namespace
}  // namespace tandem::engine
