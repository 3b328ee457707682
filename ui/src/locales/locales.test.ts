import { describe, expect, it } from "vitest";
import en from "./en";
import zh from "./zh";

function keys(value: unknown, prefix = ""): string[] {
  if (typeof value !== "object" || value === null) return [prefix];
  return Object.entries(value).flatMap(([k, v]) => keys(v, prefix ? `${prefix}.${k}` : k));
}

describe("locales", () => {
  it("Simplified Chinese has exactly the English keys, none empty", () => {
    expect(keys(zh).sort()).toEqual(keys(en).sort());
    for (const key of keys(zh)) {
      const value = key.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], zh);
      expect(typeof value === "string" && value.length > 0, key).toBe(true);
    }
  });
});
