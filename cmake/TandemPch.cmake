# Precompiled headers. The standard library, {fmt}, nlohmann::json, msgpack-c, Boost.Asio/Beast,
# CLI11 and GoogleTest are most of what every translation unit parses: server/openai/responses_types.cpp
# (328 lines) preprocesses to 230k lines, 85% of them theirs, and took 33 s at -O2; with them
# precompiled, 10 s. Each target precompiles the header groups it uses once (GCC writes one .gch
# per target, 0.1-0.3 GB) and every source of the target starts from it.
#
# Only standard and third-party headers go in: the project's own headers are still parsed per
# source, so an edit to one rebuilds only its includers, and tandem_header_check (never
# precompiled) still proves that each src/ header compiles alone.
#
# Off by default (-DTANDEM_PCH=ON turns it on): every tree is now a unity build (8 sources per
# translation unit, scripts/build.sh), which already parses those headers once per 8 sources,
# and a target has only 1-6 such units. Precompiling then cost more than it saved: a clean
# release build on 2 cores took 630 s with PCHs (547 s of the jobs' time was the 32 PCHs, and
# the units' own time barely moved) and 514 s without (docs/benchmarks.md "Build and test
# tiers"). It pays in a build source by source (-DCMAKE_UNITY_BUILD=OFF).
option(TANDEM_PCH "Precompile the standard and third-party headers (one PCH per target)" OFF)

# The standard headers that more than a handful of sources include.
set(TANDEM_PCH_std <algorithm> <array> <atomic> <chrono> <cmath> <condition_variable> <cstddef>
  <cstdint> <cstdio> <cstdlib> <cstring> <filesystem> <fstream> <functional> <limits> <map>
  <memory> <mutex> <optional> <random> <set> <span> <sstream> <string> <string_view> <thread>
  <unordered_map> <utility> <variant> <vector>)
set(TANDEM_PCH_fmt <fmt/format.h>)
set(TANDEM_PCH_json <nlohmann/json.hpp>)
set(TANDEM_PCH_msgpack <msgpack.hpp>)
set(TANDEM_PCH_net <boost/asio/any_io_executor.hpp> <boost/asio/awaitable.hpp>
  <boost/asio/co_spawn.hpp> <boost/asio/io_context.hpp> <boost/asio/ip/tcp.hpp>
  <boost/asio/post.hpp> <boost/asio/steady_timer.hpp> <boost/asio/strand.hpp>
  <boost/beast/core.hpp> <boost/beast/http.hpp>)
set(TANDEM_PCH_cli <CLI/CLI.hpp>)
set(TANDEM_PCH_gtest <gtest/gtest.h>)

# tandem_precompile(<target> [GROUP...]): precompile the standard group plus the named ones
# (fmt, json, msgpack, net, cli, gtest) for <target>'s sources. The groups are kept on the target
# (TANDEM_PCH_GROUPS) so that its unit tests can take the same ones.
function(tandem_precompile target)
  foreach(group IN LISTS ARGN)
    if(NOT DEFINED TANDEM_PCH_${group})
      message(FATAL_ERROR "tandem_precompile(${target}): no header group '${group}' "
        "(expected one of: fmt json msgpack net cli gtest)")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY TANDEM_PCH_GROUPS ${ARGN})
  if(NOT TANDEM_PCH)
    return()
  endif()
  set(headers ${TANDEM_PCH_std})
  foreach(group IN LISTS ARGN)
    list(APPEND headers ${TANDEM_PCH_${group}})
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
