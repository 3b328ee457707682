// PlanLaunch: the command line and environment the agent runs for an instance, including the
// DP flags the manager fills for one deployment across workers.
#include "cluster/agent/launch_plan.h"

#include <gtest/gtest.h>

namespace tandem::cluster::agent {
namespace {

using nlohmann::json;
using Words = std::vector<std::string>;

const json kBackend = {
    {"backend_name", "vllm-ascend-custom"},
    {"version_configs",
     {{"0.18.0rc1",
       {{"entrypoint", "tandem serve"},
        {"run_command",
         "{{model_path}} --host {{worker_ip}} --port {{port}} --served-model-name {{model_name}}"},
        {"env", {{"FROM_VERSION", "v"}, {"OMP_NUM_THREADS", "2"}}}}}}},
    {"default_version", "0.18.0rc1"},
    {"default_env", {{"OMP_NUM_THREADS", "8"}}},
    {"health_check_path", "/health"},
    {"parameter_format", "space"}};

json Model(bool distributed, Words params) {
  return {{"name", "qwen3.5-397b-1"},
          {"local_path", "/models/q"},
          {"backend", "vllm-ascend-custom"},
          {"backend_version", ""},
          {"backend_parameters", params},
          {"env", {{"OMP_NUM_THREADS", "1"}, {"TANDEM_STARTUP_TIMEOUT_S", "600"}}},
          {"distributed_inference_across_workers", distributed}};
}

const json kInstance = {{"id", 7},
                        {"worker_id", 1},
                        {"worker_ip", "10.0.0.1"},
                        {"gpu_indexes", {0, 1}},
                        {"gpu_type", "cuda"},
                        {"restart_count", 0},
                        {"distributed_servers",
                         {{"subordinate_workers",
                           {{{"worker_id", 2},
                             {"worker_ip", "10.0.0.2"},
                             {"gpu_indexes", {0, 1}},
                             {"gpu_type", "cuda"}}}},
                          {"data_parallel_rpc_port", 13389}}}};

TEST(LaunchPlanTest, MainProcessOfAPlainDeployment) {
  WorkerFacts me{1, "10.0.0.1", "eth0", "/opt/tandem/tandem"};
  json instance = kInstance;
  instance["distributed_servers"]["subordinate_workers"] = json::array();
  auto plan = PlanLaunch(instance, Model(false, {"--max-model-len=256  # short", "--seed 7"}),
                         kBackend, me, 40000, 0, -1);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->argv, (Words{"/opt/tandem/tandem", "serve", "/models/q", "--host", "10.0.0.1",
                               "--port", "40000", "--served-model-name", "qwen3.5-397b-1",
                               "--max-model-len", "256", "--seed", "7"}));
  EXPECT_FALSE(plan->follower);
  EXPECT_EQ(plan->health_path, "/health");
  EXPECT_EQ(plan->startup_timeout_s, 600);
  EXPECT_EQ(plan->env_extra.at("CUDA_VISIBLE_DEVICES"), "0,1");
  ASSERT_EQ(plan->env_layers.size(), 3u);
  EXPECT_EQ(plan->env_layers[2].at("OMP_NUM_THREADS"), "1");  // the deployment's wins later
}

TEST(LaunchPlanTest, AValueWithSpacesStaysOneArgument) {
  WorkerFacts me{1, "10.0.0.1", "", "/t"};
  json instance = kInstance;
  instance["distributed_servers"]["subordinate_workers"] = json::array();
  json model = Model(false, {"--chat-template={{TEMPLATE}}"});
  model["local_path"] = "/models/my model --api-key x";
  model["env"]["TEMPLATE"] = "/t/a b.jinja";
  auto plan = PlanLaunch(instance, model, kBackend, me, 40000, 0, -1);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->argv, (Words{"/t", "serve", "/models/my model --api-key x", "--host", "10.0.0.1",
                               "--port", "40000", "--served-model-name", "qwen3.5-397b-1",
                               "--chat-template", "/t/a b.jinja"}));
}

TEST(LaunchPlanTest, TheSeedsHandMadeSecondaryIsAFollowerOfItsHead) {
  WorkerFacts me{2, "10.0.0.2", "eth0", "/t"};
  json instance = kInstance;
  instance["worker_id"] = 2;
  instance["distributed_servers"]["subordinate_workers"] = json::array();
  auto plan =
      PlanLaunch(instance,
                 Model(false, {"--data-parallel-size 2 --data-parallel-size-local=1",
                               "--data-parallel-address=10.0.0.1", "--data-parallel-rpc-port=13389",
                               "--data-parallel-start-rank=1", "--headless"}),
                 kBackend, me, 40001, 0, -1);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->follower);
  EXPECT_EQ(plan->follower_ranks, 1);
  EXPECT_EQ(plan->head, "10.0.0.1:13389");
}

TEST(LaunchPlanTest, OneDeploymentAcrossWorkersGetsItsDataParallelFlagsFromTheManager) {
  const Words params = {"--data-parallel-size 2 --tensor-parallel-size 2",
                        "--data-parallel-size-local=2  # the user's, replaced",
                        "--api-server-count=2", "--headless"};
  WorkerFacts head{1, "10.0.0.1", "veth-a", "/t"};
  auto main = PlanLaunch(kInstance, Model(true, params), kBackend, head, 40000, 13389, -1);
  ASSERT_TRUE(main.ok()) << main.status().message();
  EXPECT_EQ(main->argv, (Words{"/t",
                               "serve",
                               "/models/q",
                               "--host",
                               "10.0.0.1",
                               "--port",
                               "40000",
                               "--served-model-name",
                               "qwen3.5-397b-1",
                               "--data-parallel-size",
                               "2",
                               "--tensor-parallel-size",
                               "2",
                               "--api-server-count",
                               "2",
                               "--data-parallel-size-local",
                               "1",
                               "--data-parallel-address",
                               "10.0.0.1",
                               "--data-parallel-rpc-port",
                               "13389"}));
  EXPECT_FALSE(main->follower);
  EXPECT_EQ(main->env_extra.at("GLOO_SOCKET_IFNAME"), "veth-a");
  EXPECT_EQ(main->env_extra.at("HCCL_IF_IP"), "10.0.0.1");

  WorkerFacts sub{2, "10.0.0.2", "veth-b", "/t"};
  auto follower = PlanLaunch(kInstance, Model(true, params), kBackend, sub, 40001, 13389, 0);
  ASSERT_TRUE(follower.ok()) << follower.status().message();
  EXPECT_EQ(follower->argv, (Words{"/t",
                                   "serve",
                                   "/models/q",
                                   "--host",
                                   "10.0.0.2",
                                   "--port",
                                   "40001",
                                   "--served-model-name",
                                   "qwen3.5-397b-1",
                                   "--data-parallel-size",
                                   "2",
                                   "--tensor-parallel-size",
                                   "2",
                                   "--data-parallel-size-local",
                                   "1",
                                   "--data-parallel-address",
                                   "10.0.0.1",
                                   "--data-parallel-rpc-port",
                                   "13389",
                                   "--headless",
                                   "--data-parallel-start-rank",
                                   "1"}));
  EXPECT_TRUE(follower->follower);
  EXPECT_EQ(follower->head, "10.0.0.1:13389");
  EXPECT_EQ(follower->env_extra.at("GLOO_SOCKET_IFNAME"), "veth-b");
}

TEST(LaunchPlanTest, RefusalsNameTheProblem) {
  WorkerFacts me{1, "10.0.0.1", "", "/t"};
  auto no_dp =
      PlanLaunch(kInstance, Model(true, {"--tensor-parallel-size 2"}), kBackend, me, 1, 2, -1);
  ASSERT_FALSE(no_dp.ok());
  EXPECT_NE(no_dp.status().message().find("needs --data-parallel-size"), std::string::npos);
  auto uneven =
      PlanLaunch(kInstance, Model(true, {"--data-parallel-size 3"}), kBackend, me, 1, 2, -1);
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.status().message().find("does not split evenly over the deployment's 2 workers"),
            std::string::npos);
  json quote = Model(false, {"--x 'unbalanced"});
  auto unbalanced = PlanLaunch(kInstance, quote, kBackend, me, 1, 0, -1);
  ASSERT_FALSE(unbalanced.ok());
  EXPECT_NE(unbalanced.status().message().find("unbalanced '"), std::string::npos);
  json backend = kBackend;
  backend["version_configs"]["0.18.0rc1"]["run_command"] = "{{model_path}} --port {{porrt}}";
  auto placeholder = PlanLaunch(kInstance, Model(false, {}), backend, me, 1, 0, -1);
  ASSERT_FALSE(placeholder.ok());
  EXPECT_NE(placeholder.status().message().find("unknown placeholder '{{porrt}}'"),
            std::string::npos);
  json timeout = Model(false, {});
  timeout["env"]["TANDEM_STARTUP_TIMEOUT_S"] = "soon";
  EXPECT_FALSE(PlanLaunch(kInstance, timeout, kBackend, me, 1, 0, -1).ok());
}

}  // namespace
}  // namespace tandem::cluster::agent
