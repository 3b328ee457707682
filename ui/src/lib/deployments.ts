// What the deployments table derives from a deployment and its instances.
import type { Deployment, Instance } from "./api";

/**
 * stopped (replicas 0), error (an instance failed), running (all ready), pending (an instance
 * waits for its placement), else starting; with the message of the instance that explains it.
 */
export function deploymentState(d: Deployment, instances: Instance[]): { state: string; message?: string } {
  if (d.replicas === 0) return { state: instances.length === 0 ? "stopped" : "stopping" };
  const failed = instances.find((i) => i.state === "ERROR");
  if (failed) return { state: "error", message: failed.state_message };
  const ready = instances.filter((i) => i.state === "RUNNING").length;
  if (ready >= d.replicas) return { state: "running" };
  const waiting = instances.find((i) => i.state === "PENDING" || i.state === "SCHEDULED");
  if (waiting) return { state: "pending", message: waiting.state_message };
  return { state: "starting", message: instances.find((i) => i.state !== "RUNNING")?.state_message };
}

/** The fields a Clone or an Edit posts back (the server ignores read-only ones anyway). */
export function editableCopy(d: Deployment): Deployment {
  const copy: Deployment = { ...d };
  for (const readOnly of ["id", "created_at", "updated_at", "ready_replicas"]) delete copy[readOnly];
  return copy;
}

/** A free name for a clone of `name` among `taken`: name-2, name-3, ... */
export function cloneName(name: string, taken: string[]): string {
  const base = name.replace(/-\d+$/, "");
  for (let n = 2; ; n += 1) {
    const candidate = `${base}-${n}`;
    if (!taken.includes(candidate)) return candidate;
  }
}
