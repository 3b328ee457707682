// The custom-backend form's values and the API's backend object, both ways, and the YAML the
// Backends page exports and imports (the API's own field names).
import YAML from "yaml";
import type { Backend } from "./api";
import { parameterEntries, parameterText } from "./params";

export interface VersionRow { version: string; entrypoint: string; run_command: string; env: string }
export interface BackendForm {
  backend_name: string;
  description?: string;
  versions: VersionRow[];
  default_version?: string;
  health_check_path?: string;
  parameter_format: string;
  default_backend_param?: string;
}

function envText(env: Record<string, string> | undefined): string {
  return Object.entries(env ?? {}).map(([k, v]) => `${k}=${v}`).join("\n");
}
function envObject(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const eq = trimmed.indexOf("=");
    out[eq < 0 ? trimmed : trimmed.slice(0, eq)] = eq < 0 ? "" : trimmed.slice(eq + 1);
  }
  return out;
}

/** The API body of the form (what POST/PUT /v2/inference-backends takes). */
export function backendFromForm(f: BackendForm): Partial<Backend> {
  const version_configs: Backend["version_configs"] = {};
  for (const v of f.versions ?? []) {
    if (!v?.version) continue;
    version_configs[v.version.trim()] = { entrypoint: v.entrypoint ?? "", run_command: v.run_command ?? "", env: envObject(v.env ?? "") };
  }
  return {
    backend_name: f.backend_name.trim(),
    description: f.description ?? "",
    version_configs,
    default_version: f.default_version ?? "",
    health_check_path: f.health_check_path || "/v1/models",
    parameter_format: f.parameter_format,
    default_backend_param: parameterEntries(f.default_backend_param ?? ""),
  };
}

export function formFromBackend(b: Partial<Backend> | null): BackendForm {
  return {
    backend_name: b?.backend_name ?? "",
    description: b?.description ?? "",
    versions: Object.entries(b?.version_configs ?? {}).map(([version, c]) => ({
      version, entrypoint: c.entrypoint ?? "", run_command: c.run_command ?? "", env: envText(c.env),
    })),
    default_version: b?.default_version ?? "",
    health_check_path: b?.health_check_path ?? "/v1/models",
    parameter_format: b?.parameter_format ?? "space",
    default_backend_param: parameterText(b?.default_backend_param),
  };
}

/** The fields YAML export writes and import reads: the API's own names. */
const EXPORTED = ["backend_name", "description", "version_configs", "default_version", "default_run_command",
  "default_entrypoint", "default_env", "default_backend_param", "health_check_path", "parameter_format"] as const;

export function backendYaml(b: Backend): string {
  const out: Record<string, unknown> = {};
  for (const k of EXPORTED) if (b[k] !== undefined) out[k] = b[k];
  return YAML.stringify(out);
}


export class NotABackendError extends Error {}

/**
 * A backend from imported YAML text (only the exported fields). Throws NotABackendError for
 * text that holds no mapping, YAML's own error for text that is not YAML.
 */
export function backendFromYaml(text: string): Partial<Backend> {
  const parsed = YAML.parse(text);
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new NotABackendError("the YAML file does not hold a backend (a mapping)");
  }
  const out: Record<string, unknown> = {};
  for (const k of EXPORTED) if (k in parsed) out[k] = (parsed as Record<string, unknown>)[k];
  return out as Partial<Backend>;
}
