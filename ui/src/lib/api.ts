// The manager's REST API (/v2, /auth) as the pages use it: JSON calls whose failures become
// ApiError with the server's message, and the live `?watch=true` feed of a resource.
import { EventSplitter, readText } from "./sse";

export class ApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/** The message of an error body: the manager's {message} or OpenAI's {error: {message}}. */
export function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text);
    if (typeof body?.message === "string") return body.message;
    if (typeof body?.error?.message === "string") return body.error.message;
  } catch {
    // not JSON: the text itself
  }
  return text.trim() || `HTTP ${status}`;
}

/** Called on a 401 from /v2 (the session ended): the app goes to the login page. */
let onUnauthenticated: () => void = () => {};
export function setOnUnauthenticated(callback: () => void) {
  onUnauthenticated = callback;
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) {
    if (response.status === 401 && path.startsWith("/v2")) onUnauthenticated();
    throw new ApiError(errorMessage(response.status, text), response.status);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface Page<T> {
  items: T[];
  pagination: { page: number; perPage: number; total: number; totalPage: number };
}

export interface WatchEvent<T> {
  type: 1 | 2 | 3; // created (and the initial replay), updated, deleted
  id: number;
  data: T;
}

/**
 * Follows `GET path?watch=true`: `onEvent` gets the replayed rows, then every change. Reconnects
 * after a second when the stream drops (the replay starts over, so `onReset` runs first).
 * Returns a function that stops watching.
 */
export function watch<T>(path: string, onReset: () => void, onEvent: (event: WatchEvent<T>) => void,
                         onError?: (message: string) => void): () => void {
  const controller = new AbortController();
  let stopped = false;
  const run = async () => {
    while (!stopped) {
      try {
        const separator = path.includes("?") ? "&" : "?";
        const response = await fetch(`${path}${separator}watch=true`, {
          credentials: "same-origin",
          signal: controller.signal,
        });
        if (!response.ok) {
          const text = await response.text();
          if (response.status === 401) {
            onUnauthenticated();
            return;
          }
          throw new ApiError(errorMessage(response.status, text), response.status);
        }
        onReset();
        const splitter = new EventSplitter();
        for await (const text of readText(response)) {
          for (const event of splitter.feed(text)) onEvent(JSON.parse(event) as WatchEvent<T>);
        }
      } catch (e) {
        if (stopped) return;
        onError?.(e instanceof Error ? e.message : String(e));
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  void run();
  return () => {
    stopped = true;
    controller.abort();
  };
}

// The resources' shapes, as docs/manager.md lists them (only what the pages read).
export interface Worker {
  id: number;
  name: string;
  ip: string;
  state: string;
  state_message?: string;
  labels?: Record<string, string>;
  maintenance?: boolean;
  status?: {
    cpu?: { total?: number; utilization_rate?: number };
    memory?: { total?: number; used?: number; utilization_rate?: number };
  };
  heartbeat_time?: string;
}

export interface Device {
  id: number;
  name: string;  // WORKER:TYPE:INDEX, what gpu_selector.gpu_ids lists
  worker_id: number;
  worker_name: string;
  worker_ip?: string;
  type: string;
  vendor?: string;
  index: number;
  memory_total?: number;
  memory_used?: number;
  [field: string]: unknown;
}

export interface Backend {
  id: number;
  backend_name: string;
  version_configs?: Record<string, { entrypoint?: string; run_command?: string; env?: Record<string, string> }>;
  default_version?: string;
  default_run_command?: string;
  default_entrypoint?: string;
  default_env?: Record<string, string>;
  default_backend_param?: string[];
  health_check_path?: string;
  parameter_format?: string;
  description?: string;
  builtin?: boolean;
}

export interface Deployment {
  id: number;
  name: string;
  local_path?: string;
  replicas: number;
  ready_replicas?: number;
  backend?: string;
  backend_version?: string;
  backend_parameters?: string[];
  env?: Record<string, string>;
  placement_strategy?: string;
  gpu_selector?: { gpu_ids?: string[]; gpus_per_replica?: number } | null;
  distributed_inference_across_workers?: boolean;
  restart_on_error?: boolean;
  resource_version?: number;
  [field: string]: unknown;
}

export interface Instance {
  id: number;
  name: string;
  model_id: number;
  model_name: string;
  worker_id?: number;
  worker_name?: string;
  worker_ip?: string;
  port?: number;
  pid?: number;
  state: string;
  state_message?: string;
  restart_count?: number;
  gpu_ids?: string[];
  distributed_servers?: {
    subordinate_workers?: { worker_id: number; worker_name?: string; worker_ip?: string; state?: string; state_message?: string; pid?: number }[];
  };
}

export interface ApiKey {
  id: number;
  name: string;
  access_key?: string;
  scope?: string[];
  allowed_model_names?: string[];
  expires_at?: string | null;
  created_at?: string;
  value?: string;
}

export interface User {
  id: number;
  username: string;
  is_admin?: boolean;
  require_password_change?: boolean;
}
