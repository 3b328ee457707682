// The web UI (ui/, built by Vite) as files inside the binary: the build compiles ui/ and
// tools/embed_ui.py writes them into a generated source (build/ui_assets.cpp), so tandem
// manager and tandem serve serve it with no files beside the binary.
//   /index.html       the manager's console (tandem manager, at / and its routes)
//   /playground.html  the chat page tandem serve shows at /
//   /assets/…         scripts and styles, named by their content hash
#pragma once

#include <vector>

#include "http/static_files.h"

namespace tandem::ui {

// Every embedded file (static storage).
const std::vector<http::StaticFile>& EmbeddedFiles();

}  // namespace tandem::ui
