// A resource's rows kept live from the manager's `?watch=true` feed (no polling).
import { useEffect, useState } from "react";
import { watch } from "./api";

export interface Watched<T> {
  rows: T[];
  loaded: boolean;  // the first event or an empty replay has arrived
  error: string | null;
}

export function useWatch<T extends { id: number | string }>(path: string | null): Watched<T> {
  const [state, setState] = useState<Watched<T>>({ rows: [], loaded: false, error: null });
  useEffect(() => {
    if (!path) return;
    let rows = new Map<number | string, T>();
    // Events come in bursts (the replay): render once per animation frame.
    let scheduled = false;
    const publish = () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        setState({ rows: [...rows.values()], loaded: true, error: null });
      });
    };
    const stop = watch<T>(
      path,
      () => {
        rows = new Map();
        publish();
      },
      (event) => {
        if (event.type === 3) rows.delete(event.id);
        else rows.set(event.id, { ...event.data, id: event.id });
        publish();
      },
      (error) => setState((s) => ({ ...s, error })),
    );
    return stop;
  }, [path]);
  return state;
}
