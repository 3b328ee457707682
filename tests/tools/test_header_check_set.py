#!/usr/bin/env python3
"""tools/header_check_set.py: the headers a change selects for the self-containment check."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import header_check_set as hcs  # noqa: E402


class HeaderCheckSetTest(unittest.TestCase):
    def test_includers_are_selected_transitively_and_nothing_else(self):
        graph = {
            "core/status.h": set(),
            "core/log.h": set(),
            "text/tokenizer.h": {"core/status.h"},
            "server/handler.h": {"text/tokenizer.h", "core/log.h"},
            "http/types.h": {"core/log.h"},
        }
        self.assertEqual(hcs.with_includers(graph, {"core/status.h"}),
                         {"core/status.h", "text/tokenizer.h", "server/handler.h"})
        self.assertEqual(hcs.with_includers(graph, {"http/types.h"}), {"http/types.h"})
        self.assertEqual(hcs.with_includers(graph, set()), set())

    def test_a_deleted_header_selects_its_includers(self):
        graph = {"a.h": {"gone.h"}, "b.h": {"a.h"}, "c.h": set()}
        self.assertEqual(hcs.with_includers(graph, {"gone.h"}), {"a.h", "b.h"})

    def test_an_include_cycle_ends(self):
        graph = {"a.h": {"b.h"}, "b.h": {"a.h"}}
        self.assertEqual(hcs.with_includers(graph, {"a.h"}), {"a.h", "b.h"})

    def test_target_names_are_cmakes_c_identifiers(self):
        self.assertEqual(hcs.c_identifier("server/openai/chat_prompt.h"),
                         "server_openai_chat_prompt_h")
        self.assertEqual(hcs.c_identifier("3d/x-y.h"), "_3d_x_y_h")

    def test_the_graph_reads_quoted_includes_only(self):
        with tempfile.TemporaryDirectory() as src:
            os.makedirs(os.path.join(src, "core"))
            with open(os.path.join(src, "core", "a.h"), "w") as f:
                f.write('#pragma once\n#include <vector>\n#include "core/b.h"\n  # include "c.h"\n')
            with open(os.path.join(src, "core", "b.h"), "w") as f:
                f.write("#pragma once\n")
            self.assertEqual(hcs.include_graph(src),
                             {"core/a.h": {"core/b.h", "c.h"}, "core/b.h": set()})

    def test_every_header_of_the_tree_is_in_the_graph(self):
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
        graph = hcs.include_graph(src)
        headers = {os.path.relpath(os.path.join(r, n), src)
                   for r, _, files in os.walk(src) for n in files if n.endswith(".h")}
        self.assertEqual(set(graph), headers)
        self.assertGreater(len(headers), 100)


if __name__ == "__main__":
    unittest.main()
