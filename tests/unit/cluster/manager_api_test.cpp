// The manager's /v2 API, in process over loopback HTTP: bootstrap and login, resources and their
// validation, optimistic concurrency, worker registration and heartbeats, API keys and their
// scopes, watch streams, and the controller's replicas → instances → placement.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>

#include "cluster/manager/controller.h"
#include "manager_test_util.h"
#include "postgres_server.h"

namespace tandem::cluster::manager {
namespace {

using nlohmann::json;
using testing::JsonReply;
using testing::ManagerHarness;

const json kSeedBackend = {{"backend_name", "vllm-ascend-custom"},
                           {"version_configs",
                            {{"0.18.0rc1",
                              {{"entrypoint", "tandem serve"},
                               {"run_command",
                                "{{model_path}} --host {{worker_ip}} --port {{port}} "
                                "--served-model-name {{model_name}}"}}}}},
                           {"default_version", "0.18.0rc1"}};

// Registers worker `name` with two CPU devices; returns (worker id, its key header).
std::pair<int64_t, std::string> RegisterWorker(ManagerHarness& h, const std::string& name) {
  JsonReply r =
      h.Json("POST", "/v2/workers", {{"name", name}, {"ip", "127.0.0.1"}, {"port", 10150}},
             "Bearer registration-token");
  EXPECT_EQ(r.status, 201) << r.raw;
  const int64_t id = r.body.value("id", int64_t{0});
  const std::string key = "Bearer " + r.body.value("api_key", "");
  json devices = json::array();
  for (int i = 0; i < 2; ++i) {
    devices.push_back({{"index", i},
                       {"type", "cpu"},
                       {"vendor", "cpu"},
                       {"name", "cpu socket"},
                       {"memory", {{"total", 1000}, {"used", 0}}}});
  }
  JsonReply hb = h.Json("POST", "/v2/workers/" + std::to_string(id) + "/heartbeat",
                        {{"status", {{"gpu_devices", devices}}}}, key);
  EXPECT_EQ(hb.status, 200) << hb.raw;
  return {id, key};
}

TEST(ManagerApiTest, BootstrapLoginAndAuthentication) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok()) << h.start_status().ToString();
  std::ifstream token(h.dir() + "/token");
  std::string text;
  token >> text;
  EXPECT_EQ(text, "registration-token");

  EXPECT_EQ(h.Call("GET", "/healthz").status, 200);
  JsonReply anonymous = h.Call("GET", "/v2/models");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.body["reason"], "Unauthorized");
  EXPECT_EQ(anonymous.body["code"], 401);

  JsonReply wrong = h.Call("POST", "/auth/login", "username=admin&password=nope", "",
                           "application/x-www-form-urlencoded");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.body["message"], "wrong username or password");
  const std::string session = h.AdminSession();
  JsonReply me = h.Call("GET", "/v2/users/me", "", session);
  ASSERT_EQ(me.status, 200) << me.raw;
  EXPECT_EQ(me.body["username"], "admin");
  EXPECT_FALSE(me.body.contains("password_hash"));
  EXPECT_EQ(h.Call("GET", "/v2/models", "", "cookie:tandem_session=1.9999999999.forged").status,
            401);
  EXPECT_EQ(h.Call("GET", "/v2/models", "",
                   "Bearer tandem_0123456789abcdef_0123456789abcdef0123456789abcdef")
                .status,
            401);
  // The registration token registers workers and nothing else.
  EXPECT_EQ(h.Call("GET", "/v2/models", "", "Bearer registration-token").status, 403);
}

TEST(ManagerApiTest, RandomBootstrapPasswordIsWrittenForTheFirstLogin) {
  ManagerConfig config;
  config.bootstrap_password = "";
  char tmpl[] = "/tmp/tandem-manager-XXXXXX";
  config.data_dir = mkdtemp(tmpl);
  config.host = "127.0.0.1";
  config.port = 0;
  Manager manager(config);
  ASSERT_TRUE(manager.Start().ok());
  std::ifstream file(config.data_dir + "/initial_admin_password");
  std::string password;
  file >> password;
  EXPECT_EQ(password.size(), 24u);
  std::ifstream token(config.data_dir + "/token");
  std::string text;
  token >> text;
  EXPECT_EQ(text.size(), 32u);
  std::filesystem::remove_all(config.data_dir);
}

TEST(ManagerApiTest, BackendsAndModelsAreValidatedByName) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  JsonReply builtin = h.Call("GET", "/v2/inference-backends?backend_name=tandem", "", admin);
  ASSERT_EQ(builtin.status, 200);
  ASSERT_EQ(builtin.body["items"].size(), 1u);
  EXPECT_EQ(builtin.body["items"][0]["is_built_in"], true);

  JsonReply created = h.Json("POST", "/v2/inference-backends", kSeedBackend, admin);
  ASSERT_EQ(created.status, 201) << created.raw;
  EXPECT_EQ(h.Json("POST", "/v2/inference-backends", kSeedBackend, admin).status, 409);
  json bad = kSeedBackend;
  bad["backend_name"] = "vllm-ascend";
  JsonReply not_custom = h.Json("POST", "/v2/inference-backends", bad, admin);
  EXPECT_EQ(not_custom.status, 400);
  EXPECT_NE(not_custom.body["message"].get<std::string>().find("end in '-custom'"),
            std::string::npos);

  json model = {{"name", "qwen3.5-397b-1"},
                {"local_path", "/models/x"},
                {"replicas", 0},
                {"backend", "vllm-ascend-custom"},
                {"backend_version", "0.18.0rc1"}};
  json unknown = model;
  unknown["replica"] = 1;
  JsonReply typo = h.Json("POST", "/v2/models", unknown, admin);
  EXPECT_EQ(typo.status, 400);
  EXPECT_NE(typo.body["message"].get<std::string>().find("unknown field 'replica'"),
            std::string::npos)
      << typo.raw;
  json wrong_version = model;
  wrong_version["backend_version"] = "9.9";
  JsonReply version = h.Json("POST", "/v2/models", wrong_version, admin);
  EXPECT_EQ(version.status, 400);
  EXPECT_EQ(version.body["message"],
            "model: backend 'vllm-ascend-custom' has no version '9.9' (it has: 0.18.0rc1)");
  json no_device = model;
  no_device["gpu_selector"] = {{"gpu_ids", {"node-a:cpu:0"}}};
  JsonReply device = h.Json("POST", "/v2/models", no_device, admin);
  EXPECT_EQ(device.status, 400);
  EXPECT_EQ(device.body["message"],
            "model: gpu_selector.gpu_ids: no worker 'node-a' has registered (in 'node-a:cpu:0')");
  JsonReply malformed = h.Call("POST", "/v2/models", "{\"name\": ", admin);
  EXPECT_EQ(malformed.status, 400);
  EXPECT_NE(malformed.body["message"].get<std::string>().find("not valid JSON"), std::string::npos);

  JsonReply ok = h.Json("POST", "/v2/models", model, admin);
  ASSERT_EQ(ok.status, 201) << ok.raw;
  EXPECT_EQ(ok.body["ready_replicas"], 0);
  EXPECT_EQ(ok.body["restart_on_error"], true);
  const std::string path = "/v2/models/" + std::to_string(ok.body["id"].get<int64_t>());

  // Clone: a POST built from a GET (read-only fields included) under a new name.
  json clone = h.Call("GET", path, "", admin).body;
  clone["name"] = "qwen3.5-397b-2";
  clone["backend_parameters"] = {"--headless  # the secondary"};
  JsonReply cloned = h.Json("POST", "/v2/models", clone, admin);
  ASSERT_EQ(cloned.status, 201) << cloned.raw;
  EXPECT_NE(cloned.body["id"], ok.body["id"]);

  // Optimistic concurrency: the second writer with the same resource_version loses.
  json edit = h.Call("GET", path, "", admin).body;
  edit["replicas"] = 1;
  EXPECT_EQ(h.Json("PUT", path, edit, admin).status, 200);
  edit["replicas"] = 2;
  JsonReply stale = h.Json("PUT", path, edit, admin);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(stale.body["reason"], "Conflict");
  EXPECT_EQ(h.Call("GET", path, "", admin).body["replicas"], 1);

  EXPECT_EQ(h.Call("PATCH", path, "{}", admin).status, 405);
  EXPECT_EQ(h.Call("GET", "/v2/nothing", "", admin).status, 404);
  EXPECT_EQ(h.Call("GET", "/v2/models/abc", "", admin).status, 404);
  EXPECT_EQ(h.Call("DELETE", path, "", admin).status, 204);
  EXPECT_EQ(h.Call("GET", path, "", admin).status, 404);
}

TEST(ManagerApiTest, WorkersRegisterHeartbeatAndAreLimitedToTheirOwnRoutes) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  auto [worker_id, key] = RegisterWorker(h, "node-a");
  JsonReply worker = h.Call("GET", "/v2/workers/" + std::to_string(worker_id), "", admin);
  EXPECT_EQ(worker.body["state"], "ready");
  JsonReply devices = h.Call("GET", "/v2/gpu-devices?sort_by=-index", "", admin);
  ASSERT_EQ(devices.body["items"].size(), 2u);
  EXPECT_EQ(devices.body["items"][0]["name"], "node-a:cpu:1");

  EXPECT_EQ(h.Call("GET", "/v2/model-instances", "", key).status, 200);
  EXPECT_EQ(h.Call("GET", "/v2/api-keys", "", key).status, 403);
  EXPECT_EQ(h.Call("GET", "/v2/users", "", key).status, 403);
  EXPECT_EQ(h.Json("POST", "/v2/models", json::object(), key).status, 403);
  auto [other_id, other_key] = RegisterWorker(h, "node-b");
  EXPECT_EQ(h.Json("POST", "/v2/workers/" + std::to_string(worker_id) + "/heartbeat",
                   json::object(), other_key)
                .status,
            403);
  // A worker's key is not listed among API keys.
  EXPECT_EQ(h.Call("GET", "/v2/api-keys", "", admin).body["items"].size(), 0u);
  // Registering again (a restarted agent, with its previous key) keeps the row and replaces
  // the key.
  JsonReply again = h.Json("POST", "/v2/workers",
                           {{"name", "node-a"},
                            {"ip", "127.0.0.1"},
                            {"port", 10150},
                            {"previous_api_key", key.substr(7)}},
                           "Bearer registration-token");
  ASSERT_EQ(again.status, 201);
  EXPECT_EQ(again.body["id"], worker_id);
  EXPECT_EQ(h.Call("GET", "/v2/model-instances", "", key).status, 401);
}

TEST(ManagerApiTest, ApiKeysAreShownOnceScopedAndRevokedAtOnce) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  JsonReply created =
      h.Json("POST", "/v2/api-keys",
             {{"name", "ci"}, {"scope", {"inference"}}, {"expires_in", 3600}}, admin);
  ASSERT_EQ(created.status, 201) << created.raw;
  const std::string value = created.body["value"];
  EXPECT_EQ(value.size(), 7u + 16 + 1 + 32);
  EXPECT_EQ(value.rfind("tandem_", 0), 0u);
  JsonReply listed = h.Call("GET", "/v2/api-keys", "", admin);
  ASSERT_EQ(listed.body["items"].size(), 1u);
  EXPECT_FALSE(listed.body["items"][0].contains("value"));
  EXPECT_FALSE(listed.body["items"][0].contains("hashed_secret"));
  EXPECT_EQ(listed.body["items"][0]["masked_value"], "tandem_" + value.substr(7, 16) + "_********");
  // An inference key does not reach /v2.
  EXPECT_EQ(h.Call("GET", "/v2/models", "", "Bearer " + value).status, 403);
  JsonReply bad_scope =
      h.Json("POST", "/v2/api-keys", {{"name", "x"}, {"scope", {"admin"}}}, admin);
  EXPECT_EQ(bad_scope.status, 400);
  JsonReply management =
      h.Json("POST", "/v2/api-keys", {{"name", "ops"}, {"scope", {"management"}}}, admin);
  const std::string ops = "Bearer " + management.body["value"].get<std::string>();
  EXPECT_EQ(h.Call("GET", "/v2/models", "", ops).status, 200);
  const std::string path = "/v2/api-keys/" + std::to_string(management.body["id"].get<int64_t>());
  EXPECT_EQ(h.Call("DELETE", path, "", admin).status, 204);
  EXPECT_EQ(h.Call("GET", "/v2/models", "", ops).status, 401);  // at once
}

TEST(ManagerApiTest, NonAdminUsersSeeOnlyTheirOwnKeysAndCannotManage) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  ASSERT_EQ(
      h.Json("POST", "/v2/users", {{"username", "alice"}, {"password", "alice-pw"}}, admin).status,
      201);
  EXPECT_EQ(h.Json("POST", "/v2/users", {{"username", "bob"}, {"password", "x"}}, admin).status,
            400);
  JsonReply login =
      h.Call("POST", "/auth/login", "{\"username\": \"alice\", \"password\": \"alice-pw\"}");
  ASSERT_EQ(login.status, 200);
  const std::string alice = "cookie:" + login.set_cookie.substr(0, login.set_cookie.find(';'));
  EXPECT_EQ(h.Json("POST", "/v2/api-keys", {{"name", "admin-key"}}, admin).status, 201);
  EXPECT_EQ(h.Json("POST", "/v2/api-keys", {{"name", "mine"}}, alice).status, 201);
  JsonReply keys = h.Call("GET", "/v2/api-keys", "", alice);
  ASSERT_EQ(keys.body["items"].size(), 1u);
  EXPECT_EQ(keys.body["items"][0]["name"], "mine");
  EXPECT_EQ(h.Call("GET", "/v2/users", "", alice).status, 403);
  EXPECT_EQ(h.Json("POST", "/v2/inference-backends", kSeedBackend, alice).status, 403);
  EXPECT_EQ(h.Call("GET", "/v2/models", "", alice).status, 200);
}

TEST(ManagerApiTest, WatchReplaysRowsThenStreamsChanges) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  ASSERT_EQ(h.Json("POST", "/v2/inference-backends", kSeedBackend, admin).status, 201);

  std::mutex mutex;
  std::string received;
  http::ClientRequest request;
  request.url = h.Url("/v2/inference-backends?watch=true");
  request.headers = {{"Cookie", admin.substr(7)}};
  http::HttpCall call(request);
  std::thread watcher([&] {
    (void)call.Run([](int, const http::HeaderList&) { return true; },
                   [&](std::string_view bytes) {
                     std::lock_guard lock(mutex);
                     received.append(bytes);
                     return true;
                   });
  });
  const auto events = [&] {
    std::lock_guard lock(mutex);
    std::vector<json> out;
    size_t pos = 0;
    while (true) {
      const size_t end = received.find("\n\n", pos);
      if (end == std::string::npos) break;
      out.push_back(json::parse(received.substr(pos, end - pos)));
      pos = end + 2;
    }
    return out;
  };
  ASSERT_TRUE(h.WaitFor("the replay", [&] { return events().size() == 2; }));
  EXPECT_EQ(events()[0]["type"], 1);
  EXPECT_EQ(events()[0]["data"]["backend_name"], "tandem");
  json updated = kSeedBackend;
  updated["description"] = "the seed's";
  const int64_t id = events()[1]["id"];
  ASSERT_EQ(h.Json("PUT", "/v2/inference-backends/" + std::to_string(id), updated, admin).status,
            200);
  ASSERT_TRUE(h.WaitFor("the update event", [&] { return events().size() == 3; }));
  EXPECT_EQ(events()[2]["type"], 2);
  EXPECT_EQ(events()[2]["changed_fields"]["description"]["new"], "the seed's");
  ASSERT_EQ(h.Call("DELETE", "/v2/inference-backends/" + std::to_string(id), "", admin).status,
            204);
  ASSERT_TRUE(h.WaitFor("the delete event", [&] { return events().size() == 4; }));
  EXPECT_EQ(events()[3]["type"], 3);
  call.Cancel();
  watcher.join();
}

TEST(ManagerApiTest, ReplicasBecomeInstancesPlacedOnTheSelectedDevices) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  auto [a_id, a_key] = RegisterWorker(h, "node-a");
  auto [b_id, b_key] = RegisterWorker(h, "node-b");
  json model = {{"name", "pinned"},
                {"local_path", "/m"},
                {"replicas", 1},
                {"gpu_selector", {{"gpu_ids", {"node-b:cpu:0", "node-b:cpu:1"}}}}};
  JsonReply created = h.Json("POST", "/v2/models", model, admin);
  ASSERT_EQ(created.status, 201) << created.raw;
  json instance;
  ASSERT_TRUE(h.WaitFor("the instance to be scheduled", [&] {
    JsonReply r = h.Call("GET", "/v2/model-instances", "", admin);
    if (r.body["items"].size() != 1) return false;
    instance = r.body["items"][0];
    return instance["state"] == "SCHEDULED";
  }));
  EXPECT_EQ(instance["worker_name"], "node-b");
  EXPECT_EQ(instance["gpu_indexes"], json({0, 1}));
  EXPECT_EQ(instance["model_name"], "pinned");

  // The agent's reports: only the placed worker may report, for the current run.
  const std::string status_path =
      "/v2/model-instances/" + std::to_string(instance["id"].get<int64_t>()) + "/status";
  EXPECT_EQ(h.Json("POST", status_path, {{"state", "RUNNING"}, {"restart_count", 0}}, a_key).status,
            403);
  EXPECT_EQ(h.Json("POST", status_path, {{"state", "RUNNING"}, {"restart_count", 3}}, b_key).status,
            409);
  EXPECT_EQ(h.Json("POST", status_path, {{"state", "BOGUS"}, {"restart_count", 0}}, b_key).status,
            400);
  ASSERT_EQ(h.Json("POST", status_path,
                   {{"state", "RUNNING"}, {"restart_count", 0}, {"port", 40000}}, b_key)
                .status,
            200);
  ASSERT_TRUE(h.WaitFor("ready_replicas = 1", [&] {
    return h.Call("GET", "/v2/models/" + std::to_string(created.body["id"].get<int64_t>()), "",
                  admin)
               .body["ready_replicas"] == 1;
  }));

  // A second deployment on the same devices waits, saying why.
  model["name"] = "second";
  ASSERT_EQ(h.Json("POST", "/v2/models", model, admin).status, 201);
  ASSERT_TRUE(h.WaitFor("the reason", [&] {
    JsonReply r = h.Call("GET", "/v2/model-instances?model_name=second", "", admin);
    return r.body["items"].size() == 1 &&
           r.body["items"][0]["state_message"] ==
               "waiting for devices: worker 'node-b' has 0 of the 2 selected devices free";
  }));

  // Replicas 0: the instance goes.
  json edit =
      h.Call("GET", "/v2/models/" + std::to_string(created.body["id"].get<int64_t>()), "", admin)
          .body;
  edit["replicas"] = 0;
  ASSERT_EQ(
      h.Json("PUT", "/v2/models/" + std::to_string(edit["id"].get<int64_t>()), edit, admin).status,
      200);
  ASSERT_TRUE(h.WaitFor("the instance to go", [&] {
    return h.Call("GET", "/v2/model-instances?model_name=pinned", "", admin).body["items"].empty();
  }));
}

TEST(ManagerApiTest, AnExpiredKeyIsRefused) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  JsonReply key = h.Json("POST", "/v2/api-keys", {{"name", "short"}, {"expires_in", 1}}, admin);
  ASSERT_EQ(key.status, 201);
  const std::string bearer = "Bearer " + key.body["value"].get<std::string>();
  EXPECT_EQ(h.Call("GET", "/v2/models", "", bearer).status, 200);
  // Expiry is a wall-clock instant: wait until it has passed, then the key is refused.
  ASSERT_TRUE(h.WaitFor(
      "the key to expire",
      [&] {
        JsonReply r = h.Call("GET", "/v2/models", "", bearer);
        return r.status == 401 && r.body["message"] == "the API key has expired";
      },
      10));
}

TEST(ManagerApiTest, AWorkerWithoutHeartbeatsBecomesNotReadyThenUnreachable) {
  ManagerConfig config;
  config.worker_not_ready_after_s = 1;
  config.worker_unreachable_after_s = 2;
  config.controller_interval_s = 0.1;
  ManagerHarness h(config);
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  auto [id, key] = RegisterWorker(h, "node-a");  // one heartbeat, then silence
  const std::string path = "/v2/workers/" + std::to_string(id);
  ASSERT_TRUE(h.WaitFor(
      "not_ready", [&] { return h.Call("GET", path, "", admin).body["state"] == "not_ready"; }));
  ASSERT_TRUE(h.WaitFor("unreachable", [&] {
    JsonReply r = h.Call("GET", path, "", admin);
    return r.body["state"] == "unreachable" &&
           r.body["state_message"].get<std::string>().rfind("no heartbeat for ", 0) == 0;
  }));
  // A heartbeat brings it back.
  ASSERT_EQ(h.Json("POST", path + "/heartbeat", {{"status", json::object()}}, key).status, 200);
  EXPECT_EQ(h.Call("GET", path, "", admin).body["state"], "ready");
  // Maintenance: no new placements, and it says so.
  json worker = h.Call("GET", path, "", admin).body;
  worker["maintenance"] = true;
  ASSERT_EQ(h.Json("PUT", path, worker, admin).status, 200);
  EXPECT_EQ(h.Call("GET", path, "", admin).body["state"], "maintenance");
  EXPECT_FALSE(h.Call("GET", path, "", admin).body.contains("log_secret"));
}

// The manager on PostgreSQL: the same flows through real SQL on the other dialect (RETURNING,
// ON CONFLICT, identity columns), skipped saying why only when the package is missing.
TEST(ManagerApiTest, OnPostgresTheSameFlowsWork) {
  static testing::PostgresServer postgres;
  if (!postgres.Available()) GTEST_SKIP() << postgres.error();
  ManagerConfig config;
  config.database_url = postgres.CreateDatabase();
  ManagerHarness h(config);
  ASSERT_TRUE(h.start_status().ok()) << h.start_status().ToString();
  const std::string admin = h.AdminSession();
  ASSERT_EQ(h.Json("POST", "/v2/inference-backends", kSeedBackend, admin).status, 201);
  EXPECT_EQ(h.Json("POST", "/v2/inference-backends", kSeedBackend, admin).status, 409);
  auto [worker_id, worker_key] = RegisterWorker(h, "node-a");
  JsonReply model = h.Json("POST", "/v2/models",
                           {{"name", "pg"},
                            {"local_path", "/m"},
                            {"replicas", 1},
                            {"gpu_selector", {{"gpu_ids", {"node-a:cpu:1"}}}}},
                           admin);
  ASSERT_EQ(model.status, 201) << model.raw;
  ASSERT_TRUE(h.WaitFor("the instance scheduled on node-a:cpu:1", [&] {
    JsonReply r = h.Call("GET", "/v2/model-instances", "", admin);
    return r.body["items"].size() == 1 && r.body["items"][0]["state"] == "SCHEDULED" &&
           r.body["items"][0]["gpu_indexes"] == json({1});
  }));
  json edit = model.body;
  edit["replicas"] = 0;
  const std::string path = "/v2/models/" + std::to_string(edit["id"].get<int64_t>());
  EXPECT_EQ(h.Json("PUT", path, edit, admin).status, 200);
  EXPECT_EQ(h.Json("PUT", path, edit, admin).status, 409);  // the same version again
  JsonReply key = h.Json("POST", "/v2/api-keys", {{"name", "k"}}, admin);
  ASSERT_EQ(key.status, 201);
  EXPECT_EQ(
      h.Call("GET", "/v2/models", "", "Bearer " + key.body["value"].get<std::string>()).status,
      200);
}

// Found by a hostile pass: each used to crash the manager, lock it out, or answer 500/200.
TEST(ManagerApiTest, HostileInputsAreRefusedAndTheManagerStaysUp) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  // Deep nesting (dump and destruction recurse per level): a 400, on every route.
  const std::string deep =
      "{\"name\": \"n\", \"env\": " + std::string(50000, '[') + std::string(50000, ']') + "}";
  JsonReply r = h.Call("POST", "/v2/models", deep, admin);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["message"],
            "request body nests JSON arrays and objects deeper than the limit of 128 levels");
  r = h.Call("POST", "/v1/completions", deep, admin);
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(r.body["error"]["message"],
            "request body nests JSON arrays and objects deeper than the limit of 128 levels");
  // A page near INT64_MAX is an empty page, not an overflowed index.
  r = h.Call("GET", "/v2/models?page=9223372036854775807&perPage=1000", "", admin);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body["items"].empty());
  // Wrong types are 400s naming the field, not 500s.
  r = h.Call("POST", "/auth/login", R"({"username": ["admin"], "password": "x"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["message"].get<std::string>().find("field 'username' must be a string"),
            std::string::npos);
  EXPECT_EQ(h.Json("POST", "/v2/workers",
                   {{"name", "w"}, {"ip", "1.2.3.4"}, {"port", 1}, {"hostname", 5}},
                   "Bearer registration-token")
                .status,
            400);
  EXPECT_EQ(
      h.Json("POST", "/v1/completions", {{"model", "m"}, {"prompt", "x"}, {"stream", "yes"}}, admin)
          .status,
      400);
  JsonReply get405 = h.Call("GET", "/v1/completions", "", admin);
  EXPECT_EQ(get405.status, 405);
  EXPECT_EQ(get405.body["error"]["type"], "MethodNotAllowedError");
  // resource_version must be the positive integer read, not a way around the check.
  JsonReply model =
      h.Json("POST", "/v2/models", {{"name", "m"}, {"local_path", "/m"}, {"replicas", 0}}, admin);
  ASSERT_EQ(model.status, 201);
  json edit = model.body;
  for (json bad : {json(-1), json("abc"), json(0)}) {
    edit["resource_version"] = bad;
    EXPECT_EQ(h.Json("PUT", "/v2/models/" + std::to_string(edit["id"].get<int64_t>()), edit, admin)
                  .status,
              400)
        << bad;
  }
  EXPECT_EQ(
      h.Json("POST", "/v2/api-keys", {{"name", "k"}, {"expires_in", INT64_MAX}}, admin).status,
      400);
  EXPECT_EQ(
      h.Json("POST", "/v2/models",
             {{"name", "e"}, {"local_path", "/m"}, {"env", {{std::string("B\0", 2), "x"}}}}, admin)
          .status,
      400);
  auto [id, key] = RegisterWorker(h, "node-a");
  EXPECT_EQ(h.Json("POST", "/v2/workers/" + std::to_string(id) + "/heartbeat",
                   {{"status", {{"gpu_devices", {{{"index", -1}, {"type", "../../x"}}}}}}}, key)
                .status,
            400);
  EXPECT_EQ(h.Call("GET", "/v2/users/me", "", key).status, 403);
  EXPECT_EQ(h.Call("GET", "/healthz").status, 200);
}

TEST(ManagerApiTest, TheLastAdminStaysAndSessionsEndAtLogoutAndPasswordChange) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  JsonReply me = h.Call("GET", "/v2/users/me", "", admin);
  const std::string path = "/v2/users/" + std::to_string(me.body["id"].get<int64_t>());
  json demote = {{"username", "admin"}, {"is_admin", false}};
  JsonReply r = h.Json("PUT", path, demote, admin);
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.body["message"], "the last admin cannot be demoted: make another user admin first");
  JsonReply other =
      h.Json("POST", "/v2/users",
             {{"username", "root2"}, {"password", "secret-2"}, {"is_admin", true}}, admin);
  ASSERT_EQ(other.status, 201);
  EXPECT_EQ(h.Json("PUT", path, demote, admin).status, 200);  // another admin exists now
  const std::string other_path = "/v2/users/" + std::to_string(other.body["id"].get<int64_t>());
  JsonReply login =
      h.Call("POST", "/auth/login", R"({"username": "root2", "password": "secret-2"})");
  const std::string root2 = "cookie:" + login.set_cookie.substr(0, login.set_cookie.find(';'));
  EXPECT_EQ(h.Call("DELETE", other_path, "", root2).status, 400);  // yourself
  EXPECT_EQ(h.Json("PUT", other_path, {{"username", "root2"}, {"is_admin", false}}, root2).status,
            409);

  // Logout revokes the cookie (and the user's other sessions); so does a password change.
  JsonReply second =
      h.Call("POST", "/auth/login", R"({"username": "root2", "password": "secret-2"})");
  const std::string root2_b = "cookie:" + second.set_cookie.substr(0, second.set_cookie.find(';'));
  EXPECT_EQ(h.Call("GET", "/v2/users/me", "", root2).status, 200);
  EXPECT_EQ(h.Call("POST", "/auth/logout", "", root2).status, 200);
  EXPECT_EQ(h.Call("GET", "/v2/users/me", "", root2).status, 401);
  EXPECT_EQ(h.Call("GET", "/v2/users/me", "", root2_b).status, 401);
  JsonReply third =
      h.Call("POST", "/auth/login", R"({"username": "root2", "password": "secret-2"})");
  const std::string root2_c = "cookie:" + third.set_cookie.substr(0, third.set_cookie.find(';'));
  ASSERT_EQ(h.Call("GET", "/v2/users/me", "", root2_c).status, 200);
  ASSERT_EQ(h.Json("PUT", other_path,
                   {{"username", "root2"}, {"password", "secret-3"}, {"is_admin", true}}, root2_c)
                .status,
            200);
  EXPECT_EQ(h.Call("GET", "/v2/users/me", "", root2_c).status, 401);
}

TEST(ManagerApiTest, TheRegistrationTokenAloneCannotTakeOverALiveWorker) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  auto [id, key] = RegisterWorker(h, "node-a");  // heartbeats: alive
  JsonReply takeover =
      h.Json("POST", "/v2/workers", {{"name", "node-a"}, {"ip", "10.6.6.6"}, {"port", 1}},
             "Bearer registration-token");
  EXPECT_EQ(takeover.status, 409);
  EXPECT_NE(takeover.body["message"].get<std::string>().find("presents its previous key"),
            std::string::npos);
  EXPECT_EQ(h.Call("GET", "/v2/model-instances", "", key).status, 200);  // the real key still works
  JsonReply restart = h.Json("POST", "/v2/workers",
                             {{"name", "node-a"},
                              {"ip", "127.0.0.1"},
                              {"port", 10150},
                              {"previous_api_key", key.substr(7)}},
                             "Bearer registration-token");
  EXPECT_EQ(restart.status, 201) << restart.raw;
  EXPECT_EQ(restart.body["id"], id);
}

// The controller against a store, with the clock as a parameter: deterministic liveness.
TEST(ControllerTest, AnUnreachableWorkersRunningInstancesGoError) {
  char tmpl[] = "/tmp/tandem-controller-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  auto store = store::Store::Open("sqlite://" + dir + "/m.db");
  ASSERT_TRUE(store.ok());
  store::Store& s = **store;
  auto worker = s.Create(store::Table::kWorkers, "node-a",
                         {{"name", "node-a"}, {"state", "ready"}, {"heartbeat_unix", 1000}});
  ASSERT_TRUE(worker.ok());
  auto model = s.Create(store::Table::kModels, "m",
                        {{"name", "m"}, {"replicas", 1}, {"restart_on_error", false}});
  ASSERT_TRUE(model.ok());
  auto running = s.Create(store::Table::kModelInstances, "m-1",
                          {{"model_id", model->id},
                           {"worker_id", worker->id},
                           {"state", "RUNNING"},
                           {"distributed_servers", {{"subordinate_workers", json::array()}}}});
  ASSERT_TRUE(running.ok());
  ManagerConfig config;
  Controller controller(s, config);
  controller.RunOnce(1000 + 29);
  EXPECT_EQ(s.Get(store::Table::kWorkers, worker->id)->data["state"], "ready");
  controller.RunOnce(1000 + 31);
  EXPECT_EQ(s.Get(store::Table::kWorkers, worker->id)->data["state"], "not_ready");
  EXPECT_EQ(s.Get(store::Table::kModelInstances, running->id)->data["state"], "RUNNING");
  controller.RunOnce(1000 + 91);
  EXPECT_EQ(s.Get(store::Table::kWorkers, worker->id)->data["state"], "unreachable");
  auto after = s.Get(store::Table::kModelInstances, running->id);
  EXPECT_EQ(after->data["state"], "ERROR");
  EXPECT_EQ(after->data["state_message"], "worker 'node-a' is unreachable (no heartbeat for 91 s)");
  std::filesystem::remove_all(dir);
}

TEST(ControllerTest, RestartBackOffIsZeroThenDoublingFromTenUpToFiveMinutes) {
  EXPECT_EQ(Controller::RestartDelayS(0), 0);
  EXPECT_EQ(Controller::RestartDelayS(1), 10);
  EXPECT_EQ(Controller::RestartDelayS(2), 20);
  EXPECT_EQ(Controller::RestartDelayS(5), 160);
  EXPECT_EQ(Controller::RestartDelayS(6), 300);
  EXPECT_EQ(Controller::RestartDelayS(60), 300);
}

}  // namespace
}  // namespace tandem::cluster::manager
