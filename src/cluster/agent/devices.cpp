#include "cluster/agent/devices.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tandem::cluster::agent {

using nlohmann::json;

namespace {

// stdout of `command` (run by /bin/sh), "" when it fails.
std::string RunCapture(const std::string& command) {
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (!pipe) return "";
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  return pclose(pipe) == 0 ? out : "";
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

int64_t MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") return kb * 1024;
  }
  return 0;
}

// Logical CPUs per physical package (socket).
std::map<int, std::vector<int>> CpusBySocket() {
  std::map<int, std::vector<int>> out;
  const long n = sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < n; ++cpu) {
    std::ifstream in(
        fmt::format("/sys/devices/system/cpu/cpu{}/topology/physical_package_id", cpu));
    int socket = 0;
    if (!(in >> socket)) socket = 0;
    out[socket].push_back(cpu);
  }
  return out;
}

DeviceInfo CpuDevice(int64_t index, const std::map<int, std::vector<int>>& sockets) {
  DeviceInfo d;
  d.index = index;
  d.type = "cpu";
  d.vendor = "cpu";
  d.name = fmt::format("CPU socket {}", index);
  auto it = sockets.find(static_cast<int>(index));
  if (it != sockets.end()) d.cpus = it->second;
  d.core_total = static_cast<int64_t>(d.cpus.size());
  d.memory_total = MemTotalBytes() / static_cast<int64_t>(std::max<size_t>(sockets.size(), 1));
  return d;
}

}  // namespace

json DeviceInfo::ToJson() const {
  return {{"index", index},
          {"type", type},
          {"vendor", vendor},
          {"name", name},
          {"memory", {{"total", memory_total}, {"used", memory_used}}},
          {"core", {{"total", core_total}}}};
}

Result<std::vector<DeviceInfo>> ParseDeviceSpec(const std::string& spec) {
  const auto sockets = CpusBySocket();
  std::vector<DeviceInfo> out;
  std::set<std::string> seen;
  std::stringstream in(spec);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    entry = Trim(entry);
    const size_t colon = entry.find(':');
    const std::string type = entry.substr(0, colon);
    const std::string index = colon == std::string::npos ? "" : entry.substr(colon + 1);
    bool digits = !index.empty() && index.size() < 6;
    for (char c : index) digits = digits && c >= '0' && c <= '9';
    if ((type != "cpu" && type != "cuda" && type != "cann") || !digits) {
      return InvalidArgument(fmt::format(
          "--devices: '{}' is not TYPE:INDEX with TYPE cpu, cuda or cann (e.g. cpu:0,cpu:1)",
          entry));
    }
    if (!seen.insert(entry).second) {
      return InvalidArgument(fmt::format("--devices lists '{}' twice", entry));
    }
    DeviceInfo d = type == "cpu" ? CpuDevice(std::stoll(index), sockets) : DeviceInfo{};
    d.index = std::stoll(index);
    d.type = type;
    if (type != "cpu") {
      d.vendor = type == "cuda" ? "nvidia" : "huawei";
      d.name = fmt::format("{} {}", type, index);
    }
    out.push_back(std::move(d));
  }
  if (out.empty()) return InvalidArgument("--devices is empty");
  return out;
}

std::vector<DeviceInfo> ParseNvidiaSmi(const std::string& csv) {
  std::vector<DeviceInfo> out;
  std::stringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, ',')) fields.push_back(Trim(field));
    if (fields.size() != 4) continue;
    try {
      DeviceInfo d;
      d.index = std::stoll(fields[0]);
      d.name = fields[1];
      d.memory_total = std::stoll(fields[2]) << 20;
      d.memory_used = std::stoll(fields[3]) << 20;
      d.type = "cuda";
      d.vendor = "nvidia";
      out.push_back(std::move(d));
    } catch (const std::exception&) {
      continue;
    }
  }
  return out;
}

std::vector<DeviceInfo> DetectDevices() {
  auto gpus = ParseNvidiaSmi(RunCapture(
      "nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv,noheader,nounits"));
  if (!gpus.empty()) return gpus;
  // npu-smi info -l: "NPU ID : N" per NPU.
  std::vector<DeviceInfo> npus;
  std::stringstream in(RunCapture("npu-smi info -l"));
  std::string line;
  while (std::getline(in, line)) {
    const size_t key = line.find("NPU ID");
    const size_t colon = line.find(':');
    if (key == std::string::npos || colon == std::string::npos) continue;
    try {
      DeviceInfo d;
      d.index = std::stoll(line.substr(colon + 1));
      d.type = "cann";
      d.vendor = "huawei";
      d.name = "Ascend NPU";
      npus.push_back(std::move(d));
    } catch (const std::exception&) {
    }
  }
  if (!npus.empty()) return npus;
  const auto sockets = CpusBySocket();
  std::vector<DeviceInfo> cpus;
  for (const auto& [socket, list] : sockets) cpus.push_back(CpuDevice(socket, sockets));
  return cpus;
}

json HostStatus::Sample() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t v[10] = {};
  stat >> cpu;
  for (uint64_t& x : v) stat >> x;
  const uint64_t idle = v[3] + v[4];
  uint64_t total = 0;
  for (int i = 0; i < 8; ++i) total += v[i];
  const uint64_t busy = total - idle;
  double rate = 0;
  if (last_total_ != 0 && total > last_total_) {
    rate =
        100.0 * static_cast<double>(busy - last_busy_) / static_cast<double>(total - last_total_);
  }
  last_busy_ = busy;
  last_total_ = total;
  int64_t mem_total = 0;
  int64_t mem_available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemTotal:") mem_total = kb * 1024;
    if (key == "MemAvailable:") mem_available = kb * 1024;
  }
  return {{"cpu", {{"total", sysconf(_SC_NPROCESSORS_ONLN)}, {"utilization_rate", rate}}},
          {"memory", {{"total", mem_total}, {"used", mem_total - mem_available}}}};
}

}  // namespace tandem::cluster::agent
