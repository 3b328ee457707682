// Two pages from one source tree: index.html is the manager's console (tandem manager serves
// it at /), playground.html the standalone chat page tandem serve shows at /. The build goes to
// TANDEM_UI_OUT (the CMake build folder) and is embedded into the binary from there.
// Vite 6 and Vitest 3: both run on Debian 12's Node.js 18 as well as on newer ones.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  // Relative asset URLs: tandem serve's page also works under --root-path (/prefix/); the
  // console's index.html pins them to the root with <base href="/"> (its routes are deep).
  base: "./",
  esbuild: { jsx: "automatic" },
  build: {
    outDir: process.env.TANDEM_UI_OUT ?? "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 4096,
    minify: process.env.TANDEM_UI_DEBUG ? false : "esbuild",  // TANDEM_UI_DEBUG=1: readable stacks
    rollupOptions: {
      // antd's "use client" lines are for React Server Components; a browser bundle drops them.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
      input: {
        index: resolve(here, "index.html"),
        playground: resolve(here, "playground.html"),
      },
    },
  },
  test: { include: ["src/**/*.test.ts"] },
});
