// The form field a manager error names: "model: field 'replicas' must be 0..64" → replicas;
// "model: gpu_selector.gpu_ids lists ..." → gpu_selector.gpu_ids. null when none is named.
export function fieldOfError(message: string): string | null {
  const quoted = /field '([A-Za-z0-9_.]+)'/.exec(message);
  if (quoted) return quoted[1];
  const dotted = /^[a-z ]+: ([a-z_]+\.[a-z_]+)/.exec(message);
  return dotted ? dotted[1] : null;
}
