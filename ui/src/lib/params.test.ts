import { describe, expect, it } from "vitest";
import { parameterEntries, parameterProblem, parameterWords, splitPosixWords } from "./params";

// The seed's primary parameters (../shared/docs/SEED_DEPLOYMENT.md), as a user pastes them into
// the form with the write-up's notes turned into # comments.
const SEED = `--data-parallel-size 2 --tensor-parallel-size 8
--data-parallel-size-local=1                           # DP ranks on this machine
--api-server-count=2                                   # HTTP front-end processes
--data-parallel-address=192.168.13.33
--data-parallel-rpc-port=13389
--seed=1024

--enable-expert-parallel
--max-num-seqs=16
--max-model-len=32768
--max-num-batched-tokens=8192
--gpu-memory-utilization=0.90
--trust-remote-code
--async-scheduling                                     # overlap CPU scheduling with device compute
--no-enable-prefix-caching
--speculative_config '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}'
--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}'
--additional-config '{"enable_cpu_binding":true,"multistream_overlap_shared_expert":true}'
--disable-access-log-for-endpoints /health,/metrics,/ping`;

describe("parameterWords", () => {
  it("turns the seed's text into its argument list", () => {
    expect(parameterWords(SEED)).toEqual([
      "--data-parallel-size", "2", "--tensor-parallel-size", "8",
      "--data-parallel-size-local=1",
      "--api-server-count=2",
      "--data-parallel-address=192.168.13.33",
      "--data-parallel-rpc-port=13389",
      "--seed=1024",
      "--enable-expert-parallel",
      "--max-num-seqs=16",
      "--max-model-len=32768",
      "--max-num-batched-tokens=8192",
      "--gpu-memory-utilization=0.90",
      "--trust-remote-code",
      "--async-scheduling",
      "--no-enable-prefix-caching",
      "--speculative_config", '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}',
      "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
      "--additional-config", '{"enable_cpu_binding":true,"multistream_overlap_shared_expert":true}',
      "--disable-access-log-for-endpoints", "/health,/metrics,/ping",
    ]);
  });

  it("stores one entry per non-blank line, comments kept for the agent to drop", () => {
    const entries = parameterEntries(SEED);
    expect(entries).toHaveLength(18);
    expect(entries[1]).toBe("--data-parallel-size-local=1                           # DP ranks on this machine");
  });

  it("splits as POSIX sh: quotes, escapes, comments only at a word's start", () => {
    expect(splitPosixWords(`a"b c"d 'e f'\\ g`)).toEqual(["ab cd", "e f g"]);
    expect(splitPosixWords(`--x=a#b # gone`)).toEqual(["--x=a#b"]);
    expect(splitPosixWords(`"\\"q\\" \\$x \\a"`)).toEqual([`"q" $x \\a`]);
    expect(splitPosixWords(`''`)).toEqual([""]);
    expect(splitPosixWords("   ")).toEqual([]);
  });

  it("names the line and character of an unbalanced quote or a trailing backslash", () => {
    expect(parameterProblem("--a 1\n--b '{\"x\": 1}")).toBe("unbalanced ' at line 2, character 5");
    expect(parameterProblem('--c "open')).toBe('unbalanced " at line 1, character 5');
    expect(parameterProblem("--d \\")).toBe("a trailing backslash at line 1, character 5");
    expect(parameterProblem(SEED)).toBeNull();
  });
});
