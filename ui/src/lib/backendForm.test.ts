import { describe, expect, it } from "vitest";
import type { Backend } from "./api";
import { backendFromForm, backendFromYaml, backendYaml, formFromBackend } from "./backendForm";

// The seed's custom backend (../shared/docs/SEED_DEPLOYMENT.md, MANAGER.md §4).
const SEED: Backend = {
  id: 7,
  backend_name: "vllm-ascend-custom",
  version_configs: {
    "0.18.0rc1": {
      entrypoint: "tandem serve",
      run_command: "{{model_path}} --host {{worker_ip}} --port {{port}} --served-model-name {{model_name}}",
      env: { OMP_NUM_THREADS: "1", PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True" },
    },
  },
  default_version: "0.18.0rc1",
  health_check_path: "/health",
  parameter_format: "equal",
  default_backend_param: ["--trust-remote-code", "--seed=1024  # same on every machine"],
  description: "the seed's backend",
};

describe("backend form", () => {
  it("goes form -> API body -> form without loss, env as NAME=value lines", () => {
    const form = formFromBackend(SEED);
    expect(form.versions).toEqual([{
      version: "0.18.0rc1",
      entrypoint: "tandem serve",
      run_command: SEED.version_configs!["0.18.0rc1"].run_command,
      env: "OMP_NUM_THREADS=1\nPYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
    }]);
    expect(form.default_backend_param).toBe("--trust-remote-code\n--seed=1024  # same on every machine");
    const { id: _id, ...withoutId } = SEED;
    expect(backendFromForm(form)).toEqual(withoutId);
  });

  it("exports YAML with the API's names, not the id, and imports it back", () => {
    const text = backendYaml(SEED);
    expect(text).toContain("backend_name: vllm-ascend-custom\n");
    expect(text).not.toContain("id:");
    const { id: _id, ...withoutId } = SEED;
    expect(backendFromYaml(text)).toEqual(withoutId);
  });

  it("refuses YAML that holds no mapping, and keeps only known fields", () => {
    expect(() => backendFromYaml("- a\n- b\n")).toThrow("does not hold a backend");
    expect(() => backendFromYaml("just text")).toThrow("does not hold a backend");
    expect(backendFromYaml("backend_name: x-custom\nresource_version: 3\n")).toEqual({ backend_name: "x-custom" });
  });
});
